import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import {
  type Check,
  type CheckContext,
  type CheckOutcome,
  describeCall,
  describeResponse,
} from '../check.ts';
import { reproductionOf } from '../exchange-record.ts';
import type { ShortWait } from '../short-waits.ts';
import type { Exchange } from '../suite-request.ts';
import { type LimitedEndpoint, noRateLimitSeen, observeBurst, type TimedExchange } from './burst.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

// Added to the wait: covers network and scheduling jitter, not clock skew (dates are read against Date).
const MARGIN_MS = 100;

const FIX =
  "compute Retry-After from the limit's real state (time until a request would be admitted), rounded up, for every limit (each tool's own too)";

/** When a 429 said a request would be admitted again (ms on the suite's clock), if it said. */
function untilOf(t: TimedExchange): number | undefined {
  const header = t.exchange.response.headers['retry-after'];
  const parsed = header === undefined ? undefined : parseRetryAfter(header);
  return parsed
    ? t.receivedAt + retryAfterDelayMs(parsed, t.exchange.response.headers.date, t.receivedAt)
    : undefined;
}

/** Per limited endpoint, the latest 429 with a usable Retry-After (the longest wait still in force). */
function probePlans(limited: readonly LimitedEndpoint[]) {
  return limited
    .map(({ endpoint, rateLimited }) => {
      const timed = rateLimited
        .map((t) => ({ t, until: untilOf(t) }))
        .filter((x): x is { t: TimedExchange; until: number } => x.until !== undefined);
      if (timed.length === 0) return undefined;
      const latest = timed.reduce((a, b) => (b.until > a.until ? b : a));
      return { endpoint, latest: latest.t, until: latest.until };
    })
    .filter((plan) => plan !== undefined)
    .sort((a, b) => a.until - b.until);
}

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

type ProbeResult = { admitted: Exchange } | { outcome: CheckOutcome };

/** Whether a wait until `until` can be granted: within --max-wait-seconds and the time budget. */
function refusedWait(ctx: CheckContext, until: number): CheckOutcome | undefined {
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
 * Waits until a 429's Retry-After has elapsed and sends the endpoint once more. A 429 again fails the rule
 * when nothing of the suite's was sent after that 429; when something was (the burst of a later endpoint,
 * another endpoint's probe), that call may have taken the slot the wait freed: the new 429's wait is then
 * waited, and the probe sent again, alone.
 */
async function probe(
  ctx: CheckContext,
  plan: { endpoint: LimitedEndpoint['endpoint']; latest: TimedExchange; until: number },
): Promise<ProbeResult> {
  let { latest, until } = plan;
  for (;;) {
    const refused = refusedWait(ctx, until);
    if (refused) return { outcome: refused };
    const wait = Math.max(0, until - ctx.now());
    ctx.log(`  waiting ${(wait / 1000).toFixed(1)} s as Retry-After on ${plan.endpoint.name} asked`);
    await ctx.sleep(wait + MARGIN_MS);
    const alone = latest.sentBefore === undefined || latest.sentBefore === ctx.client.requests;
    // A 429 is the answer to judge; a transient 5xx is retried as anywhere else.
    const retry = await ctx.client.send(requestFor(plan.endpoint, { token: VALID_TOKEN }), {
      observe429: true,
    });
    if (retry.response.status !== 429) return { admitted: retry };
    const next: TimedExchange = { exchange: retry, receivedAt: ctx.now(), sentBefore: ctx.client.requests };
    const nextUntil = untilOf(next);
    if (alone || nextUntil === undefined)
      return {
        outcome: {
          verdict: 'fail',
          message: `Expected ${plan.endpoint.method} ${plan.endpoint.path} to be admitted once Retry-After ("${latest.exchange.response.headers['retry-after']}") had elapsed, nothing else of the suite's sent meanwhile; got ${describeResponse(retry)}. Fix: ${FIX}.`,
          reproduction: reproductionOf(retry),
        },
      };
    latest = next;
    until = nextUntil;
  }
}

/**
 * A request sent once Retry-After has elapsed is admitted (spec §7 "429 remedy", §8): judged on every
 * endpoint the burst met a 429 on (each tool's own limit may lie where whoami's tells the truth), earliest
 * wait first, and never passed beside the suite's own evidence of a wait that proved too short (its client
 * waited what a 429 asked, alone, and met a 429 again).
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
    const plans = probePlans(burst.limited);
    if (plans.length === 0)
      return { verdict: 'skipped', message: 'the 429s carried no usable Retry-After: nothing to honour' };
    const admitted: string[] = [];
    let unobserved: CheckOutcome | undefined;
    for (const plan of plans) {
      // A wait beyond --max-wait-seconds or the time budget: the client's own retries of this endpoint,
      // admitted once the wait their 429 asked had passed, are what was seen of the rule there.
      const seen = ctx.client.honouredWait?.(`${plan.endpoint.method} ${plan.endpoint.path}`);
      if (seen && refusedWait(ctx, plan.until)) {
        admitted.push(
          `${plan.endpoint.name} (the suite's own retry, ${seen.admitted.response.status} after Retry-After "${seen.asked.response.headers['retry-after']}")`,
        );
        continue;
      }
      const result = await probe(ctx, plan);
      if ('admitted' in result) {
        admitted.push(
          `${plan.endpoint.name} (${result.admitted.response.status} after Retry-After "${plan.latest.exchange.response.headers['retry-after']}")`,
        );
        continue;
      }
      if (result.outcome.verdict === 'fail') return result.outcome;
      unobserved ??= { ...result.outcome, message: `${plan.endpoint.name}: ${result.outcome.message}` };
    }
    // The client's evidence gathered while probing counts as much as before.
    const [late] = ctx.client.shortWaits?.() ?? [];
    if (late) return shortWaitFailure(late);
    if (unobserved) return unobserved;
    return { verdict: 'pass', message: `admitted once Retry-After had elapsed: ${admitted.join(', ')}` };
  },
};
