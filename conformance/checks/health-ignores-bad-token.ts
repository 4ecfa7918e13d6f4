import fc from 'fast-check';
import { garbageToken } from '../arbitraries/garbage-token.ts';
import { longToken } from '../arbitraries/long-token.ts';
import { unicodeToken } from '../arbitraries/unicode-token.ts';
import { innerWhitespaceToken } from '../arbitraries/whitespace-token.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../check.ts';
import { checkProperty } from '../check-cases.ts';
import { HEALTH_PATH, refusedByServer } from './support.ts';

export const healthIgnoresBadToken: Check = {
  id: 'health.ignores-bad-token',
  title: 'GET /v1/health is unaffected by a bad identity token',
  specRef: [{ section: 4, rules: [1] }],
  level: 'SHOULD',
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.oneof(
        garbageToken().map((token) => ({ kind: 'garbage', token })),
        unicodeToken().map((token) => ({ kind: 'unicode', token })),
        innerWhitespaceToken().map((token) => ({ kind: 'whitespace', token })),
        longToken().map((token) => ({ kind: 'long', token })),
      ),
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
    ),
};
