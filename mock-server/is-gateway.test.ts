import { describe, expect, it } from 'vitest';
import { createGateway } from './gateway.ts';
import { isGateway } from './is-gateway.ts';
import { assertFollowsClientRules, notAGateway } from './testing.ts';

describe('isGateway: one test of "a gateway made by createGateway" for the msw adapter and the matchers', () => {
  it('knows a gateway from another fetch handler, a look-alike and a mistake', () => {
    expect(isGateway(createGateway({ log: () => {} }))).toBe(true);
    expect(isGateway({ fetch: async () => new Response('') })).toBe(false);
    // What the msw adapter used to accept: the names present, not what they are.
    expect(isGateway({ runtime: 1, journal: 1, clientReport: 1, fetch: async () => new Response('') })).toBe(
      false,
    );
    for (const mistake of [null, undefined, 'gateway', 3, [], { clientReport: () => ({}) }])
      expect(isGateway(mistake)).toBe(false);
  });

  it('is what the matchers refuse by', () => {
    const lookalike = { runtime: {}, journal: {}, clientReport: () => ({}) };
    expect(() => assertFollowsClientRules(lookalike as never, 'agent-early')).toThrow(notAGateway(lookalike));
  });
});
