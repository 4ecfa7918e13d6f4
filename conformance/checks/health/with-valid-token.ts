import fc from 'fast-check';
import { checkEach } from '../../check-kit/check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { DENIED_TOKEN, HEALTH_PATH, VALID_TOKEN } from '../../check-kit/support.ts';

export const healthWithValidToken: Check = {
  id: 'health.with-valid-token',
  title: 'GET /v1/health succeeds with a valid token too, whatever the tier',
  specRef: [{ section: 4, rules: [1, 3] }],
  level: 'MUST',
  needs: ['token'],
  // Health is not a tool: no tier or allowlist applies to it (rule 3 lets only "every other endpoint"
  // answer 403), so a gateway that runs its policy on health when a token comes along is wrong.
  run: (ctx) =>
    checkEach(
      ctx,
      {
        valid: fc.constant(VALID_TOKEN),
        ...(ctx.has.deniedToken && { denied: fc.constant(DENIED_TOKEN) }),
      },
      async (token, label) => {
        const exchange = observed(await ctx.client.send({ method: 'GET', path: HEALTH_PATH, token }));
        const { status } = exchange.response;
        if (status >= 200 && status < 300) return;
        throw new CheckFailure({
          expected: `2xx from GET /v1/health with the ${label} token`,
          actual: describeResponse(exchange),
          fix: 'answer the health check before authentication and authorization: a token, valid or not, of any tier, changes nothing',
          exchange,
        });
      },
      { runsPerCategory: 1 },
    ),
};
