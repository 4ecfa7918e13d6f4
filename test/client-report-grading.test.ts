import { setupServer } from 'msw/node';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';
import { type ClientProgram, gradeOutcome } from './clients/catalogue.ts';
import { prepareInProcess } from './support/in-process-catalogue.ts';

/*
 * Grading a catalogue program: a timing rule is waived for a run whose waits load disturbed, but in process
 * a rule decided by delivery facts (no-parallel-storm) is not a matter of timing, so it is never waived.
 */
const storm: ClientProgram = {
  name: 'grading-probe-storm',
  verdict: 'bad',
  rules: ['no-parallel-storm'],
  reason:
    'a probe: claims a storm, sends one whoami (a report that saw nothing observes no rule), and says load disturbed its waits',
  agent: 'agent-verified',
  timing: ['no-parallel-storm'],
  timingHeld: () => 'its waits were disturbed',
  async run({ baseUrl, token, fetch }) {
    await (await fetch(`${baseUrl}/v1/whoami`, { headers: { 'X-Agent-Identity': token } })).text();
  },
};

describe('grading a program whose waits load disturbed', () => {
  it('over HTTP, its timing rule is waived (decided by time there)', () => {
    const outcome = gradeOutcome(storm, createGateway({ log: () => {} }), { ms: 0 });
    expect(outcome.timingDisturbed).toBe('its waits were disturbed');
    expect(outcome.missed).toEqual([]);
  });

  it('in process, a rule decided by delivery facts is still required: a storm not flagged is missed', async () => {
    const prepared = prepareInProcess(storm, 'grading-probe.test');
    const server = setupServer(...prepared.handlers);
    server.listen({ onUnhandledFrame: 'error' });
    try {
      await prepared.run();
    } finally {
      server.close();
    }
    const outcome = prepared.grade();
    expect(outcome.timingDisturbed).toBeUndefined();
    expect(outcome.missed).toEqual(['no-parallel-storm']);
  });
});
