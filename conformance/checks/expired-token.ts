import { type Check, observed } from '../check.ts';
import { checkOnce } from '../check-cases.ts';
import {
  EXPIRED_TOKEN,
  expectError,
  expectNoServerError,
  protectedEndpoints,
  requestFor,
} from './support.ts';

/**
 * Optional (needs --expired-token or --expired-token-command): a genuine token, once signed by the
 * identity provider, past its lifetime, is refused on every protected endpoint like any invalid token.
 */
export const expiredToken: Check = {
  id: 'auth.expired-token',
  title: 'A genuine token past its lifetime gets 401 invalid_identity_token on every protected endpoint',
  specRef: [{ section: 5, rules: [3] }],
  level: 'MUST',
  needs: ['expiredToken'],
  run: (ctx) =>
    checkOnce(ctx, async () => {
      const endpoints = protectedEndpoints(ctx.endpoints);
      for (const endpoint of endpoints) {
        const exchange = observed(await ctx.client.send(requestFor(endpoint, { token: EXPIRED_TOKEN })));
        expectNoServerError(exchange, 'an expired identity token');
        expectError(
          exchange,
          401,
          ['invalid_identity_token'],
          "check the token's expiry (exp) on every endpoint and answer 401 invalid_identity_token once it has passed",
        );
      }
      return `refused 401 invalid_identity_token on ${endpoints.map((e) => e.name).join(', ')}`;
    }),
};
