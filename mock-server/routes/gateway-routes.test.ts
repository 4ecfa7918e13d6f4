import { describe, expect, it } from 'vitest';
import { TOOL_STAGES, WHOAMI_STAGES } from './gateway-routes.ts';

describe('the /v1 routes as lists of stages', () => {
  it('a tool call: identity (401), a recorded answer (replay), policy (403), body (400/413/415), limits (429), key, fault, tool', () => {
    expect(TOOL_STAGES.map((stage) => stage.name)).toEqual([
      'identifyCaller',
      'replayRecorded',
      'authorizeTool',
      'readBody',
      'admitCall',
      'checkIdempotencyKey',
      'injectToolFault',
      'answerWithTool',
    ]);
  });

  it('whoami: identity and limits, no policy and no body', () => {
    expect(WHOAMI_STAGES.map((stage) => stage.name)).toEqual([
      'identifyCaller',
      'replayWhoami',
      'admitWhoami',
      'injectWhoamiFault',
      'whoamiAnswer',
    ]);
  });
});
