import fc from 'fast-check';
import { checkProperty } from '../../check-kit/check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { DENIED_TOKEN, requestFor, VALID_TOKEN } from '../../check-kit/support.ts';

export const whoamiAnyTier: Check = {
  id: 'authz.whoami-any-tier',
  title: 'GET /v1/whoami succeeds with every valid token, including one denied the tools',
  specRef: [{ section: 4, rules: [2] }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) => {
    const tokens = ctx.has.deniedToken ? [VALID_TOKEN, DENIED_TOKEN] : [VALID_TOKEN];
    return checkProperty(
      ctx,
      fc.constantFrom(...tokens),
      async (token) => {
        const exchange = observed(await ctx.client.send(requestFor(ctx.endpoints.whoami, { token })));
        const { status, json } = exchange.response;
        if (status === 200 && typeof json === 'object' && json !== null) return;
        throw new CheckFailure({
          expected: `200 with a JSON body from whoami for the ${token.kind === 'derived' ? token.from : ''} token`,
          actual: describeResponse(exchange),
          fix: 'allow whoami for every verified identity, whatever its tier; gate only the tools',
          exchange,
        });
      },
      {
        // Each token once on every seed: four draws of two tokens miss the denied one one seed in sixteen.
        examples: tokens,
        numRuns: Math.min(ctx.numRuns, 4),
        passMessage: (runs) =>
          `held for ${runs} cases${ctx.has.deniedToken ? '' : ' (valid token only: pass --denied-token to check a denied one too)'}`,
      },
    );
  },
};
