import type { Exchange } from '../model/suite-request.ts';
import { checkOnce } from './check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from './check-contract.ts';
import { DENIED_TOKEN, requestFor, VALID_TOKEN } from './support.ts';
import { tellsCallersApart } from './whoami-volatile.ts';

const FIX = "return the caller's identity and its policy tier from whoami, as a JSON object (spec §4, §2)";

/** Fails unless whoami answered 200 with a non-empty JSON object (field names are "not shown"). */
function expectIdentity(exchange: Exchange, who: string): void {
  const { status, json } = exchange.response;
  const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
  if (status === 200 && isObject && Object.keys(json).length > 0) return;
  throw new CheckFailure({
    expected: `200 from whoami with the ${who} token, with the caller's identity and tier as a non-empty JSON object`,
    actual: describeResponse(exchange),
    fix: FIX,
    exchange,
  });
}

export const whoamiIdentity: Check = {
  id: 'authz.whoami-identity',
  title:
    "whoami returns the caller's identity: a non-empty JSON object, different for two callers of different tiers",
  specRef: [{ section: 4, rules: [2] }, { section: 2 }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) =>
    checkOnce(ctx, async () => {
      const whoami = (token: typeof VALID_TOKEN) =>
        ctx.client.send(requestFor(ctx.endpoints.whoami, { token })).then(observed);
      const first = await whoami(VALID_TOKEN);
      expectIdentity(first, 'valid');
      if (!ctx.has.deniedToken) {
        return 'whoami answered a non-empty JSON object (valid token only: pass --denied-token to check that it tells two callers apart)';
      }
      // valid, denied, valid: a field that changes with time changes between the two valid calls too,
      // so it is known as volatile and cannot make the two callers look different.
      const other = await whoami(DENIED_TOKEN);
      expectIdentity(other, 'denied');
      const again = await whoami(VALID_TOKEN);
      expectIdentity(again, 'valid');
      if (tellsCallersApart(first.response.json, again.response.json, other.response.json)) {
        return 'whoami answered each caller with its own identity (the valid and the denied token differ beyond the fields that change from call to call)';
      }
      throw new CheckFailure({
        expected:
          'different whoami bodies for two callers of different tiers ($TOKEN and $DENIED_TOKEN), beyond the fields that change from call to call',
        actual: `the same for both: ${describeResponse(other)}`,
        fix: FIX,
        exchange: other,
      });
    }),
};
