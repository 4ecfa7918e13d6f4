import fc from 'fast-check';
import { garbageToken } from '../arbitraries/garbage-token.ts';
import { longToken, tokenOfLength } from '../arbitraries/long-token.ts';
import { unicodeToken } from '../arbitraries/unicode-token.ts';
import { innerWhitespaceToken } from '../arbitraries/whitespace-token.ts';
import type { TokenValue } from '../model/token-value.ts';
import { checkProperty } from './check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from './check-contract.ts';
import { HEALTH_PATH, refusedByServer } from './support.ts';

/** The kinds of bad token health is sent, each with its arbitrary. */
const KINDS: [string, fc.Arbitrary<TokenValue>][] = [
  ['garbage', garbageToken()],
  ['unicode', unicodeToken()],
  ['whitespace', innerWhitespaceToken()],
  ['long', longToken()],
];

export const healthIgnoresBadToken: Check = {
  id: 'health.ignores-bad-token',
  title: 'GET /v1/health is unaffected by a bad identity token',
  specRef: [{ section: 4, rules: [1] }],
  level: 'SHOULD',
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.oneof(...KINDS.map(([kind, token]) => token.map((t) => ({ kind, token: t })))),
      async ({ kind, token }) => {
        const exchange = observed(await ctx.client.send({ method: 'GET', path: HEALTH_PATH, token }));
        const { status } = exchange.response;
        // As in auth.invalid-token: the server may refuse non-ASCII header bytes before any route runs.
        if ((status >= 200 && status < 300) || refusedByServer(kind, exchange)) return;
        throw new CheckFailure({
          expected: '2xx from GET /v1/health even when a bad X-Agent-Identity is sent',
          actual: describeResponse(exchange),
          fix: 'answer the health check before looking at the identity header at all',
          exchange,
        });
      },
      // One of each kind on every seed (a long one at 2,049 characters), then the generated ones.
      {
        examples: [
          ...KINDS.filter(([kind]) => kind !== 'long').map(([kind, token]) => ({
            kind,
            token: fc.sample(token, { numRuns: 1, seed: 1 })[0] as TokenValue,
          })),
          { kind: 'long', token: tokenOfLength(2049) },
        ],
      },
    ),
};
