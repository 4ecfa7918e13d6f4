import { curlFor } from '../client/curl.ts';
import { reproductionOf } from '../client/recorded-exchange.ts';
import type { TokenContradiction, TokenSighting } from '../tokens/token-ledger.ts';
import { type Check, type CheckContext, describeCall, describeResponse } from './check-contract.ts';
import { DENIED_TOKEN, requestFor, VALID_TOKEN } from './support.ts';

/** Rounds of the check's own probe: each served endpoint, in turn, sequentially (12 calls with both tools). */
const PROBE_ROUNDS = 4;

const FIX =
  'verify tokens the same way on every instance and route: one signing key set (rotate with overlap), one revocation list, clocks in sync; find the instance or route that answered the refusal (its logs, the reproduction sent a few times)';

const sighting = (s: TokenSighting) => `${describeCall(s.exchange)} (answer ${s.answerNo} of the run)`;

/** The failure, with both sides of the evidence: which request refused the token and which accepted it. */
function contradicted(found: TokenContradiction) {
  const { refused, acceptedAfter, acceptedBefore } = found;
  const before = acceptedBefore ? `accepted by ${sighting(acceptedBefore)} before it, ` : '';
  // The same call a dozen times shows a refusing instance behind a balancer: most accept, some refuse.
  const again = curlFor(refused.exchange).replace(
    /^curl -sS -i/,
    "curl -sS -o /dev/null -w '%{http_code}\\n'",
  );
  return {
    verdict: 'fail' as const,
    message: `Expected the ${found.credential} token, which the gateway accepted, to be accepted on every request while it is valid (spec §4 rule 2, §5 rules 2-3); got ${describeResponse(refused.exchange)} to ${sighting(refused)}, ${before}and accepted again by ${sighting(acceptedAfter)}, a request sent after that refusal arrived (${found.acceptances} acceptances and ${found.refusals} refusals in the run). A token does not come back to life: it was valid when refused, so the refusal is the gateway's, not the token's. Fix: ${FIX}`,
    reproduction: {
      ...reproductionOf(refused.exchange),
      script: `# The refused request, sent 12 times: a gateway that verifies tokens one way answers one status.\nfor i in $(seq 1 12); do ${again}; done | sort | uniq -c`,
    },
  };
}

/**
 * The valid token (and the denied one) is accepted on every request while it is valid (spec §4 rule 2:
 * whoami succeeds with a valid token; §5 rules 2-3: 401 invalid_identity_token is for a token not
 * accepted).
 *
 * What it means: a token the gateway accepted and then refused may have expired; one it refused and then
 * accepted again, on a request sent after the refusal arrived, was valid when refused (tokens do not come
 * back to life). That refusal is evidence against the gateway, from every request of the run (the
 * client's token ledger) and from this check's own sequential probe of each served endpoint.
 *
 * The most common real way to break it: one instance behind a load balancer with a stale signing key
 * (or a replica's stale revocation list, or a clock ahead that sees tokens as expired) refusing a share of
 * requests. The most unusual legal way to keep it: tokens with a very short life (a few dozen requests)
 * and a --token-command: each refused once, then replaced by a fresh one, never accepted again.
 */
export const validTokenAccepted: Check = {
  id: 'auth.valid-token-accepted',
  title:
    'A valid token is accepted on every request while valid: never refused 401 and then accepted again (a refusing instance behind a balancer)',
  specRef: [
    { section: 4, rules: [2] },
    { section: 5, rules: [2, 3] },
  ],
  level: 'MUST',
  needs: ['token'],
  async run(ctx: CheckContext) {
    const tokens = ctx.has.deniedToken ? [VALID_TOKEN, DENIED_TOKEN] : [VALID_TOKEN];
    for (let round = 0; round < PROBE_ROUNDS; round++) {
      for (const endpoint of ctx.servedEndpoints)
        await ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }));
      for (const token of tokens.slice(1)) await ctx.client.send(requestFor(ctx.endpoints.whoami, { token }));
    }
    const found = ctx.client.ledger.contradiction();
    if (found) return contradicted(found);
    const { acceptances, refusals } = ctx.client.ledger.totals();
    if (acceptances === 0) {
      return {
        verdict: 'inconclusive' as const,
        unobserved: 'token-refused' as const,
        message:
          'the gateway accepted none of the requests with the real tokens in this check (did the token expire?): give a --token-command so the suite can mint a fresh one',
      };
    }
    const expired =
      refusals > 0
        ? `; ${refusals} refusal(s), none followed by an acceptance of the same token (expired)`
        : '';
    return {
      verdict: 'pass' as const,
      message: `the real tokens were accepted on ${acceptances} answers of the run and never refused and then accepted again${expired}`,
    };
  },
};
