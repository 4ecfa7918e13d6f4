import type { TokenValue } from '../model/token-value.ts';
import { checkOnce } from './check-cases.ts';
import { type Check, observed } from './check-contract.ts';
import { expectError, expectNoServerError, protectedEndpoints, requestFor } from './support.ts';

/**
 * A genuine token, once signed by the identity provider, that is no longer valid (`what`) is refused on
 * every protected endpoint like any invalid token (§5 rule 3): the check of an expired and of a revoked one.
 */
export function genuineTokenRefused(what: { token: TokenValue; label: string; fix: string }): Check['run'] {
  return (ctx) =>
    checkOnce(ctx, async () => {
      const endpoints = protectedEndpoints(ctx.endpoints);
      for (const endpoint of endpoints) {
        const exchange = observed(await ctx.client.send(requestFor(endpoint, { token: what.token })));
        expectNoServerError(exchange, what.label);
        expectError(exchange, 401, ['invalid_identity_token'], what.fix);
      }
      return `refused 401 invalid_identity_token on ${endpoints.map((e) => e.name).join(', ')}`;
    });
}
