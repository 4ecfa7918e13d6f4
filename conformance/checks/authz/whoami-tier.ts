import { checkOnce } from '../../check-kit/check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { DENIED_TOKEN, requestFor, VALID_TOKEN } from '../../check-kit/support.ts';

/** Every string and number in a JSON value (whoami's shape is "not shown": the tier may be anywhere). */
function valuesOf(value: unknown): string[] {
  if (typeof value === 'string' || typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(valuesOf);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(valuesOf);
  return [];
}

/**
 * Optional (needs --tier, and --denied-tier for the denied token): whoami shows the tier the gateway
 * applies to the token (§4 rule 2), as a value anywhere in its JSON body (its field names are not shown).
 */
export const whoamiTier: Check = {
  id: 'authz.whoami-tier',
  title: 'GET /v1/whoami shows the tier applied to the token (the one given with --tier / --denied-tier)',
  specRef: [{ section: 4, rules: [2] }],
  level: 'MUST',
  needs: ['token', 'tier'],
  run: (ctx) =>
    checkOnce(ctx, async () => {
      const cases = [
        ...(ctx.tier !== undefined ? [{ token: VALID_TOKEN, tier: ctx.tier, which: 'valid' }] : []),
        ...(ctx.deniedTier !== undefined && ctx.has.deniedToken
          ? [{ token: DENIED_TOKEN, tier: ctx.deniedTier, which: 'denied' }]
          : []),
      ];
      for (const { token, tier, which } of cases) {
        const exchange = observed(await ctx.client.send(requestFor(ctx.endpoints.whoami, { token })));
        const values = exchange.response.status === 200 ? valuesOf(exchange.response.json) : [];
        if (!values.includes(tier))
          throw new CheckFailure({
            expected: `whoami for the ${which} token to show its tier "${tier}" (a value of its JSON body)`,
            actual: describeResponse(exchange),
            fix: 'show the applied tier in whoami (spec §4 rule 2), as the tier is named in your tier policy; if the token has another tier, give that one with --tier / --denied-tier',
            exchange,
          });
      }
      return `whoami shows ${cases.map((c) => `"${c.tier}" for the ${c.which} token`).join(' and ')}`;
    }),
};
