import { reproductionOf } from '../client/recorded-exchange.ts';
import { beyondSporadic, burstFailure, burstScript, observeBurst, SPORADIC } from './burst-observation.ts';
import { type Check, CheckFailure, describeResponse, failureMessage } from './check-contract.ts';

const FIX =
  'shed load with 429 rate_limited (section 8), or with 503 and a Retry-After that a retry after it clears; never with a bare 5xx, a 5xx that persists, or a dropped connection';

/**
 * Under a burst the gateway answers 2xx, 429, or a 5xx that is transient (spec §7: "5xx: transient
 * server-side failure; retry with backoff"; §8: limits are signalled by 429).
 *
 * What it means, decided from what the gateway did, never from how many requests landed in a window:
 * - every 5xx must clear when retried (three times, with backoff, never sooner than its Retry-After): one
 *   that persists, or a dropped connection, fails;
 * - a 503 with a Retry-After is load shed as HTTP says to (RFC 9110 §15.6.4), allowed in any amount, so
 *   the verdict does not turn on how many requests crossed a concurrency threshold on a loaded machine;
 * - a 5xx that says nothing (a 500, 502, 504, a bare 503) is a transient failure when sporadic (at most
 *   3, or 10% of the burst): a rare 500 that a retry clears is tolerated exactly as a rare 502 is; more is
 *   the burst answered with server errors (nginx's limit_req answers a bare 503 by default), a failure.
 *
 * The most common real way to break it: a limiter or overload guard that answers 503 (or 500) with no
 * Retry-After to every request over the limit. The most unusual legal way to keep it: an Envoy-style
 * overload manager shedding most of a burst with 503 + Retry-After, each shed request served on retry.
 */
export const no5xxUnderBurst: Check = {
  id: 'ratelimit.no-5xx-under-burst',
  title:
    'Under a burst the gateway signals limits with 429, never a 5xx that persists, a bare 5xx as its answer, or a dropped connection (503 + Retry-After cleared by a retry is load shedding)',
  specRef: [{ section: 8 }, { section: 7 }],
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    const broken = burst.serverErrors[0];
    if (broken) {
      const failure = new CheckFailure({
        expected: `2xx, 429, or a 5xx that a retry clears, for every request of a ${burst.requests}-request burst`,
        actual: describeResponse(broken.exchange),
        fix: FIX,
        exchange: broken.exchange,
        aboutServerErrors: true,
      });
      return burstFailure(burst, broken.exchange, failureMessage(failure));
    }
    const { unsignalled, transient } = burst;
    if (beyondSporadic(burst)) {
      const first = unsignalled[0]?.exchange;
      const status = first?.transientStatus ?? first?.response.status ?? '5xx';
      return {
        verdict: 'fail',
        message: `Expected 2xx or 429 under a burst, with at most a few (${SPORADIC.count}, or ${SPORADIC.share * 100}%) 5xx that say nothing; got ${unsignalled.length} of ${burst.requests} burst requests answered ${status} (or another 5xx) without a Retry-After, each cleared only by the suite's retry: that is the burst answered with server errors. Fix: ${FIX}`,
        ...(first && { reproduction: { ...reproductionOf(first), script: burstScript(burst) } }),
      };
    }
    const shed = transient.length - unsignalled.length;
    const notes = [
      shed > 0 ? `${shed} shed with 503 and Retry-After, each served on retry` : '',
      unsignalled.length > 0 ? `${unsignalled.length} sporadic 5xx, each cleared by a retry` : '',
    ].filter(Boolean);
    return {
      verdict: 'pass',
      message: `${burst.requests} burst requests, none answered a 5xx that persisted or dropped${notes.length ? ` (${notes.join('; ')})` : ''}`,
    };
  },
};
