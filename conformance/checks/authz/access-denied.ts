import fc from 'fast-check';
import { variedBody } from '../../arbitraries/varied-body.ts';
import { checkEach } from '../../check-kit/check-cases.ts';
import { type Check, observed } from '../../check-kit/check-contract.ts';
import { DENIED_TOKEN, deniedEndpoint, expectError, requestFor } from '../../check-kit/support.ts';

export const accessDenied: Check = {
  id: 'authz.access-denied',
  title:
    '403 access_denied, as JSON, for a valid token on a tool its tier or allowlist does not allow, every time it is called',
  specRef: [{ section: 3 }, { section: 5, rules: [4] }, { section: 7 }],
  level: 'MUST',
  needs: ['deniedToken'],
  // Several calls, in this order: the first, the same again, the same JSON written differently, another
  // body. A gateway that decides once (a session flag, a cache keyed by the body) lets one of them
  // through. An agent must not repeat a denied call (the client report flags it); the suite is a tester,
  // and four calls are what it takes to see that the refusal holds.
  run: (ctx) => {
    const endpoint = deniedEndpoint(ctx);
    const body = endpoint.body as string;
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    return checkEach(
      ctx,
      {
        first: fc.constant(body),
        repeat: fc.constant(body),
        reformatted: fc.constant(pretty),
        'other-body': variedBody(body),
      },
      async (text, label) => {
        const exchange = observed(
          await ctx.client.send(requestFor(endpoint, { token: DENIED_TOKEN, body: text })),
        );
        expectError(
          exchange,
          403,
          ['access_denied'],
          label === 'first'
            ? `answer 403 {"code":"access_denied"} when a verified caller's tier and allowlist do not include ${ctx.deniedTool}`
            : `decide authorization on every call: the ${label === 'repeat' ? 'same call again' : label === 'reformatted' ? 'same JSON written differently' : 'same tool with another body'} must get 403 access_denied too`,
        );
      },
      { runsPerCategory: 1 },
    );
  },
};
