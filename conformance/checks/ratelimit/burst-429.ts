import {
  type BurstObservation,
  burstFailure,
  noRateLimitSeen,
  observeBurst,
  shedWithServerErrors,
  type TimedExchange,
} from '../../check-kit/burst-observation.ts';
import {
  type Check,
  CheckFailure,
  type CheckOutcome,
  describeResponse,
  failureMessage,
} from '../../check-kit/check-contract.ts';
import { expectError } from '../../check-kit/support.ts';

/**
 * A bounded burst of allowed calls meets the rate limit as 429 {"code":"rate_limited"} (spec §8, §7).
 *
 * What it means: the limit is signalled by the status 429, and by nothing else. `rate_limited` under any
 * other status (a 200 body saying so, a 403, a 503) is the limit signalled the wrong way: a failure of this
 * rule, never "no 429 seen" (no budget would ever show one, and --allow-unobserved must not make it green).
 * A burst that met no 429 and nothing else is inconclusive: the limit may be beyond --rate-limit-budget.
 *
 * The most common real way to break it: a framework's limiter configured to answer 200 {"code":
 * "rate_limited"} (a GraphQL-style "errors in a 200") or 403 (@fastify/rate-limit's `ban`). The most
 * unusual legal way to keep it: 200 answers that carry a nested advisory `code` about the quota
 * (`{"warnings":[{"code":"rate_limited"}]}`) while the limit itself is a 429: only a top-level `code`
 * is an error code.
 */
/** The failure of a limit signalled as 503 + Retry-After: what was seen, and why it is a limit. */
function limitAs503Failure(
  burst: BurstObservation,
  { shed, servedBefore }: NonNullable<BurstObservation['limitAs503']>,
): CheckOutcome {
  const first = (shed[0] as TimedExchange).exchange;
  const retryAfter = first.response.headers['retry-after'];
  return burstFailure(
    burst,
    first,
    `Expected the rate limit met by a burst of allowed calls to answer 429 {"code":"rate_limited"}; got ${describeResponse(first)} with Retry-After "${retryAfter}" to ${shed.length} calls in a row sent one at a time (nothing else of the burst in flight), after the gateway had served ${servedBefore} of the burst: a refusal that persists at concurrency 1 depends on the count of calls in a window, not on load, so it is a rate limit signalled with the wrong status (load shedding refuses concurrent calls and serves them one at a time). Fix: signal a rate limit with 429 {"code":"rate_limited"} and Retry-After (spec §8); keep 503 for overload`,
  );
}

export const rateLimitBurst: Check = {
  id: 'ratelimit.burst-429',
  title: 'A bounded burst meets the rate limit as 429 with code rate_limited, and no other refusal (not 403)',
  specRef: [{ section: 8 }, { section: 7 }],
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    // The calls are all allowed: a refusal other than 429 is the limit signalled the wrong way.
    const refusal = burst.refusals[0];
    if (refusal) {
      const failure = new CheckFailure({
        expected: `every answer to a ${burst.requests}-request burst of allowed calls to be served (2xx) or 429 rate_limited, the code rate_limited under no other status (a transient 5xx that a retry clears is tolerated)`,
        actual: describeResponse(refusal.exchange),
        fix:
          refusal.exchange.response.status < 300
            ? 'signal a rate limit with the status 429 {"code":"rate_limited"} (spec §8): a 200 (or any 2xx) that says rate_limited in its body is read by every HTTP client as served'
            : 'signal a rate limit with 429 {"code":"rate_limited"} (spec §8), never 403 or another status (e.g. @fastify/rate-limit\'s `ban` answers 403: leave it off)',
        exchange: refusal.exchange,
      });
      return burstFailure(burst, refusal.exchange, failureMessage(failure));
    }
    // 503 + Retry-After that persisted when the burst sent one request at a time: a limit (it depends on
    // the count of calls in a window), not load shedding (which serves calls that come one at a time).
    if (burst.limitAs503) return limitAs503Failure(burst, burst.limitAs503);
    // No 429, but the limit acted all the same: the burst met 5xx (load shed with 503, as nginx's
    // limit_req does by default): the limit is signalled by another status. A failure, not a budget.
    const shed = burst.rateLimited.length === 0 ? shedWithServerErrors(burst) : undefined;
    if (shed) {
      const status = shed.exchange.transientStatus ?? shed.exchange.response.status;
      return burstFailure(
        burst,
        shed.exchange,
        `Expected the rate limit met by a ${burst.requests}-request burst of allowed calls to answer 429 {"code":"rate_limited"}; got no 429, and ${status === 0 ? 'dropped connections' : `${status} (a server error)`} where the limit acted (${burst.serverErrors.length + burst.unsignalled.length} of ${burst.requests} requests, without a Retry-After). Fix: signal a rate limit with 429 rate_limited and Retry-After (spec §8), not with a 5xx (nginx: limit_req_status 429;)`,
      );
    }
    if (burst.rateLimited.length === 0) return noRateLimitSeen(burst);
    for (const { exchange } of burst.rateLimited) {
      try {
        expectError(
          exchange,
          429,
          ['rate_limited'],
          'answer rate-limited requests 429 {"code":"rate_limited"}',
        );
      } catch (error) {
        if (!(error instanceof CheckFailure)) throw error;
        return burstFailure(
          burst,
          exchange,
          `Expected ${error.expected}; got ${describeResponse(exchange)}. Fix: ${error.fix}`,
        );
      }
    }
    const repeats = [...new Set(burst.repeatRefused.map((t) => t.exchange.request.path))];
    const refusedRepeats =
      repeats.length > 0
        ? ` or refused as repeats; repeats of ${repeats.join(', ')} were refused as duplicates (retry.sequential judges that), which ended the burst there`
        : '';
    const where = burst.limited.map((l) => `${l.endpoint.name} ${l.rateLimited.length}`).join(', ');
    return {
      verdict: 'pass',
      message: `${burst.rateLimited.length} of ${burst.requests} burst requests answered 429 rate_limited (${where}), the others 2xx${refusedRepeats}`,
    };
  },
};
