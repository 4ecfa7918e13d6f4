import type { TokenValue } from '../model/token-value.ts';
import { checkOnce } from './check-cases.ts';
import { type Check, observed } from './check-contract.ts';
import {
  EXPIRED_TOKEN,
  expectError,
  expectNoServerError,
  protectedEndpoints,
  REVOKED_TOKEN,
  requestFor,
} from './support.ts';

/**
 * A genuine token, once signed by the identity provider, that is no longer valid (`what`) is refused on
 * every protected endpoint like any invalid token (§5 rule 3): the check of an expired and of a revoked one.
 */
function genuineTokenRefused(what: { token: TokenValue; label: string; fix: string }): Check['run'] {
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

/**
 * Needs --expired-token or --expired-token-command: a genuine token past its lifetime is refused on every
 * protected endpoint like any invalid token. Without it the check is skipped, and a run exits 2 naming the
 * option (unless an expected-results file lists the skip).
 */
export const expiredToken: Check = {
  id: 'auth.expired-token',
  title: 'A genuine token past its lifetime gets 401 invalid_identity_token on every protected endpoint',
  specRef: [{ section: 5, rules: [3] }],
  level: 'MUST',
  needs: ['expiredToken'],
  run: genuineTokenRefused({
    token: EXPIRED_TOKEN,
    label: 'an expired identity token',
    fix: "check the token's expiry (exp) on every endpoint and answer 401 invalid_identity_token once it has passed",
  }),
};

/**
 * Needs --revoked-token or --revoked-token-command: a genuine token the identity provider revoked before its
 * expiry is refused on every protected endpoint like any invalid token.
 */
export const revokedToken: Check = {
  id: 'auth.revoked-token',
  title:
    'A genuine token the identity provider revoked gets 401 invalid_identity_token on every protected endpoint',
  specRef: [{ section: 5, rules: [3] }],
  level: 'MUST',
  needs: ['revokedToken'],
  run: genuineTokenRefused({
    token: REVOKED_TOKEN,
    label: 'a revoked identity token',
    fix: 'check revocations on every endpoint (the identity provider’s revocation list, or verify with it) and answer 401 invalid_identity_token for a revoked token',
  }),
};
