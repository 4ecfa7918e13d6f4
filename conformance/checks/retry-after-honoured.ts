import { reproductionOf } from '../client/recorded-exchange.ts';
import type { ShortWait } from '../client/short-waits.ts';
import { noRateLimitSeen, observeBurst } from './burst-observation.ts';
import { type Check, type CheckOutcome, describeCall, describeResponse } from './check-contract.ts';

const FIX =
  "compute Retry-After from the limit's real state (time until a request would be admitted), rounded up, for every limit (each tool's own too)";

/** The client's own evidence that a Retry-After lied, as a failure of this rule. */
function shortWaitFailure(short: ShortWait): CheckOutcome {
  const header = short.asked.response.headers['retry-after'];
  const asked =
    header !== undefined ? `Retry-After "${header}"` : `a wait of ${Math.ceil(short.askedMs / 1000)} s`;
  return {
    verdict: 'fail',
    message: `Expected a request sent once Retry-After had elapsed to be admitted; the suite's own client waited what a 429 to ${describeCall(short.asked)} asked (${asked}), and its retry got ${describeResponse(short.again)}: no other call of the suite's was admitted meanwhile, so the wait proved too short (the client then backed off further). Fix: ${FIX}.`,
    reproduction: reproductionOf(short.again),
  };
}

/**
 * A request sent once Retry-After has elapsed is admitted (spec §7 "429 remedy", §8), judged on every
 * endpoint the burst met a 429 on (each tool's own limit may lie where whoami's tells the truth): the burst
 * waits out each limit and probes it, alone, before it bursts the next endpoint (burst-observation.ts). Never passed
 * beside the suite's own evidence of a wait that proved too short (its client waited what a 429 asked and
 * met a 429 again, no admitted call to explain it).
 */
export const retryAfterHonoured: Check = {
  id: 'ratelimit.retry-after-honoured',
  title: 'A request sent once Retry-After has elapsed is admitted (Retry-After is truthful)',
  specRef: [{ section: 7, note: '429 remedy' }, { section: 8 }],
  level: 'SHOULD',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    const [short] = ctx.client.shortWaits?.() ?? [];
    if (short) return shortWaitFailure(short);
    if (burst.rateLimited.length === 0 || burst.limited.length === 0) return noRateLimitSeen(burst);
    const admitted: string[] = [];
    let unobserved: CheckOutcome | undefined;
    for (const { endpoint, probe } of burst.limited) {
      if (!probe) continue;
      const retryAfter = probe.latest.exchange.response.headers['retry-after'];
      if (probe.answer?.response.status === 429)
        return {
          verdict: 'fail',
          message: `Expected ${endpoint.method} ${endpoint.path} to be admitted once Retry-After ("${retryAfter}") had elapsed, nothing else of the suite's sent meanwhile; got ${describeResponse(probe.answer)}. Fix: ${FIX}.`,
          reproduction: reproductionOf(probe.answer),
        };
      if (probe.answer) {
        admitted.push(`${endpoint.name} (${probe.answer.response.status} after Retry-After "${retryAfter}")`);
        continue;
      }
      // The wait was beyond --max-wait-seconds or the budget: the client's own retries of this endpoint,
      // admitted once the wait their 429 asked had passed, are what was seen of the rule there.
      const seen = ctx.client.honouredWait?.(`${endpoint.method} ${endpoint.path}`);
      if (seen) {
        admitted.push(
          `${endpoint.name} (the suite's own retry, ${seen.admitted.response.status} after Retry-After "${seen.asked.response.headers['retry-after']}")`,
        );
        continue;
      }
      if (probe.refused)
        unobserved ??= { ...probe.refused, message: `${endpoint.name}: ${probe.refused.message}` };
    }
    if (unobserved) return unobserved;
    if (admitted.length === 0)
      return { verdict: 'skipped', message: 'the 429s carried no usable Retry-After: nothing to honour' };
    return { verdict: 'pass', message: `admitted once Retry-After had elapsed: ${admitted.join(', ')}` };
  },
};
