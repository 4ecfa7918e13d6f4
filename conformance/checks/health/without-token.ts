import fc from 'fast-check';
import { checkProperty } from '../../check-kit/check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { HEALTH_PATH } from '../../check-kit/support.ts';

export const healthWithoutToken: Check = {
  id: 'health.without-token',
  title: 'GET /v1/health succeeds without any identity token',
  specRef: [{ section: 4, rules: [1] }],
  level: 'MUST',
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.constantFrom<string | undefined>(undefined, 'application/json', '*/*'),
      async (accept) => {
        const exchange = observed(
          await ctx.client.send({
            method: 'GET',
            path: HEALTH_PATH,
            headers: accept ? { Accept: accept } : {},
          }),
        );
        const { status } = exchange.response;
        if (status >= 200 && status < 300) return;
        throw new CheckFailure({
          expected: '2xx from GET /v1/health without an X-Agent-Identity header',
          actual: describeResponse(exchange),
          fix: 'route the health check before authentication, so it needs no token',
          exchange,
        });
      },
      { numRuns: Math.min(ctx.numRuns, 3) },
    ),
};
