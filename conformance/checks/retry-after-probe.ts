import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import { askedWaitOf } from '../client/client-pacing.ts';
import type { Exchange } from '../model/suite-request.ts';
import type { CheckContext, CheckOutcome, Endpoint } from './check-contract.ts';
import { requestFor, VALID_TOKEN } from './support.ts';
import type { TimedExchange } from './timed-exchange.ts';

/* The wait the burst (burst-observation.ts) grants each limited endpoint before it bursts the next, and the probe sent
 * once it has passed: what ratelimit.retry-after-honoured judges. */

// Added to the wait: covers network and scheduling jitter, not clock skew (dates are read against Date).
const MARGIN_MS = 100;

/** What the probe of one limited endpoint showed: its answer once Retry-After had elapsed, or why none. */
export interface RetryAfterProbe {
  /** The 429 whose Retry-After was waited (the latest one: the longest wait still in force). */
  latest: TimedExchange;
  /** The request sent once that wait had passed, nothing else of the suite's sent meanwhile. */
  answer?: Exchange;
  /** Why no probe was sent: the wait was beyond --max-wait-seconds or the time budget. */
  refused?: CheckOutcome;
}

/** When a 429 said a request would be admitted again (ms on the suite's clock), if its Retry-After said. */
export function untilOf(t: TimedExchange): number | undefined {
  const header = t.exchange.response.headers['retry-after'];
  const parsed = header === undefined ? undefined : parseRetryAfter(header);
  return parsed
    ? t.receivedAt + retryAfterDelayMs(parsed, t.exchange.response.headers.date, t.receivedAt)
    : undefined;
}

/** Why a wait until `until` cannot be granted (beyond --max-wait-seconds or the time budget), if it cannot. */
export function refusedWait(ctx: CheckContext, until: number): CheckOutcome | undefined {
  const wait = until - ctx.now();
  if (wait > ctx.maxWaitSeconds * 1000)
    return {
      verdict: 'inconclusive',
      unobserved: 'max-wait',
      message: `Retry-After asks for ${Math.ceil(wait / 1000)} s, more than --max-wait-seconds ${ctx.maxWaitSeconds}: raise it to check this`,
    };
  if (ctx.now() + wait > ctx.client.deadline)
    return {
      verdict: 'inconclusive',
      unobserved: 'time-budget',
      message: `Retry-After asks for ${Math.ceil(wait / 1000)} s, beyond what is left of the time budget (--time-budget-seconds)`,
    };
  return undefined;
}

/**
 * Waits out an endpoint's limit after its burst met 429s, as a client must before calling again (spec §7),
 * and sends it once more when a Retry-After told the wait: the probe of a truthful Retry-After, alone
 * (nothing else of the suite's is sent meanwhile). Returns the probe (undefined without a Retry-After), and
 * whether the wait was granted: when it is beyond --max-wait-seconds or the budget, nothing more is burst.
 */
export async function waitOutLimit(
  ctx: CheckContext,
  endpoint: Endpoint,
  limited: readonly TimedExchange[],
): Promise<{ probe?: RetryAfterProbe; waited: boolean; waitMs: number }> {
  const timed = limited
    .map((t) => ({
      t,
      until: untilOf(t) ?? t.receivedAt + (askedWaitOf(t.exchange.response, t.receivedAt) ?? 0),
    }))
    .reduce((a, b) => (b.until > a.until ? b : a));
  const told = untilOf(timed.t) !== undefined;
  const refused = refusedWait(ctx, timed.until);
  const wait = Math.max(0, timed.until - ctx.now());
  if (refused) return { ...(told && { probe: { latest: timed.t, refused } }), waited: false, waitMs: wait };
  ctx.log(`  waiting ${(wait / 1000).toFixed(1)} s as the 429s to ${endpoint.name} asked`);
  await ctx.sleep(wait + MARGIN_MS);
  if (!told) return { waited: true, waitMs: wait };
  // A 429 is the answer to judge; a transient 5xx is retried as anywhere else.
  const answer = await ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }), { observe429: true });
  return { probe: { latest: timed.t, answer }, waited: true, waitMs: wait };
}
