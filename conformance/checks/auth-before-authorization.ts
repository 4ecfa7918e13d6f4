import fc from 'fast-check';
import type { TokenTransform, TokenValue } from '../model/token-value.ts';
import { checkProperty } from './check-cases.ts';
import { type Check, observed } from './check-contract.ts';
import { deniedEndpoint, expectError, requestFor } from './support.ts';

/** Ways to spoil a real token while keeping its claims readable to a gateway that does not verify first. */
const spoil = (): fc.Arbitrary<TokenTransform> =>
  fc.oneof(
    fc.record({
      op: fc.constant('replace' as const),
      at: fc.double({ min: 0.5, max: 1, noNaN: true }),
      char: fc.constantFrom('A', 'z', '0', '_'),
    }),
    fc.record({
      op: fc.constant('truncate' as const),
      keep: fc.double({ min: 0.7, max: 0.99, noNaN: true }),
    }),
  );

export const authBeforeAuthorization: Check = {
  id: 'auth.before-authorization',
  title: 'Authentication comes before authorization: a spoiled token for a denied tool gets 401, never 403',
  specRef: [{ section: 5, rules: [3, 4] }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) => {
    // A denied agent's token, spoiled, on its denied tool: a gateway that reads the claims before checking
    // the signature would answer 403 (and leak the agent's policy). Without a denied token, the valid one.
    const from = ctx.has.deniedToken ? 'denied' : 'valid';
    const endpoint = deniedEndpoint(ctx);
    // On every seed: the last character changed (the spoil a comparison that skips it misses) and a cut.
    const examples: TokenTransform[] = [
      { op: 'replace', at: 1, char: 'A' },
      { op: 'truncate', keep: 0.9 },
    ];
    return checkProperty(
      ctx,
      spoil(),
      async (transform) => {
        const token: TokenValue = { kind: 'derived', from, transform };
        const exchange = observed(await ctx.client.send(requestFor(endpoint, { token })));
        expectError(
          exchange,
          401,
          ['invalid_identity_token'],
          'verify the token before any policy decision; only a verified identity may get 403 access_denied',
        );
      },
      { examples },
    );
  },
};
