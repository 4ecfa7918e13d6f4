import fc from 'fast-check';
import { type Check, checkProperty, observed } from '../check.ts';
import { DENIED_TOKEN, expectError, requestFor } from './support.ts';

export const accessDenied: Check = {
  id: 'authz.access-denied',
  title: '403 access_denied for a valid token on a tool its tier or allowlist does not allow',
  specRef: '§3, §5 rule 4, §7',
  level: 'MUST',
  needs: ['deniedToken'],
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.constantFrom<string | undefined>(undefined, 'application/json', '*/*'),
      async (accept) => {
        const endpoint = ctx.endpoints[ctx.deniedTool];
        const exchange = observed(
          await ctx.client.send(
            requestFor(endpoint, {
              token: DENIED_TOKEN,
              headers: { 'Content-Type': 'application/json', ...(accept ? { Accept: accept } : {}) },
            }),
          ),
        );
        expectError(
          exchange,
          403,
          ['access_denied'],
          `answer 403 {"code":"access_denied"} when a verified caller's tier and allowlist do not include ${ctx.deniedTool}`,
        );
      },
      { numRuns: Math.min(ctx.numRuns, 3) },
    ),
};
