import fc from 'fast-check';
import { type Check, CheckFailure, checkProperty, describeResponse, observed } from '../check.ts';
import { DENIED_TOKEN, expectError, isJsonContentType, requestFor } from './support.ts';

export const accessDenied: Check = {
  id: 'authz.access-denied',
  title: '403 access_denied, as JSON, for a valid token on a tool its tier or allowlist does not allow',
  specRef: '§3, §5 rule 4, §7',
  level: 'MUST',
  needs: ['deniedToken'],
  // One call: repeating a denied call is what the spec tells clients not to do, and the suite behaves.
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.constant(ctx.endpoints[ctx.deniedTool]),
      async (endpoint) => {
        const exchange = observed(await ctx.client.send(requestFor(endpoint, { token: DENIED_TOKEN })));
        expectError(
          exchange,
          403,
          ['access_denied'],
          `answer 403 {"code":"access_denied"} when a verified caller's tier and allowlist do not include ${ctx.deniedTool}`,
        );
        if (!isJsonContentType(exchange.response.headers['content-type'])) {
          throw new CheckFailure({
            expected: 'Content-Type application/json (or application/*+json) on the 403',
            actual: describeResponse(exchange),
            fix: 'send errors with Content-Type: application/json',
            exchange,
          });
        }
      },
      {
        numRuns: 1,
        passMessage: () =>
          'the denied call got 403 access_denied (sent once: a denied call is not to be repeated)',
      },
    ),
};
