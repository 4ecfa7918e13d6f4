import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import { type Check, describeResponse } from '../check.ts';
import { reproductionOf } from '../exchange-record.ts';
import { noRateLimitSeen, observeBurst } from './burst.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

// Added to the wait: covers network and scheduling jitter, not clock skew (dates are read against Date).
const MARGIN_MS = 100;

export const retryAfterHonoured: Check = {
  id: 'ratelimit.retry-after-honoured',
  title: 'A request sent once Retry-After has elapsed is admitted (Retry-After is truthful)',
  specRef: [{ section: 7, note: '429 remedy' }, { section: 8 }],
  level: 'SHOULD',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    if (burst.rateLimited.length === 0 || !burst.limitedEndpoint) return noRateLimitSeen(burst);
    // The latest 429 tells the longest wait still in force.
    const timed = burst.rateLimited
      .map((t) => {
        const header = t.exchange.response.headers['retry-after'];
        const parsed = header === undefined ? undefined : parseRetryAfter(header);
        return parsed
          ? {
              ...t,
              until: t.receivedAt + retryAfterDelayMs(parsed, t.exchange.response.headers.date, t.receivedAt),
            }
          : undefined;
      })
      .filter((t) => t !== undefined);
    if (timed.length === 0)
      return { verdict: 'skipped', message: 'the 429s carried no usable Retry-After: nothing to honour' };
    const latest = timed.reduce((a, b) => (b.until > a.until ? b : a));
    const wait = latest.until - ctx.now();
    if (wait > ctx.maxWaitSeconds * 1000) {
      return {
        verdict: 'inconclusive',
        unobserved: 'max-wait',
        message: `Retry-After asks for ${Math.ceil(wait / 1000)} s, more than --max-wait-seconds ${ctx.maxWaitSeconds}: raise it to check this`,
      };
    }
    if (ctx.now() + wait > ctx.client.deadline) {
      return {
        verdict: 'inconclusive',
        unobserved: 'time-budget',
        message: `Retry-After asks for ${Math.ceil(wait / 1000)} s, beyond what is left of the time budget (--time-budget-seconds)`,
      };
    }
    ctx.log(`  waiting ${(Math.max(0, wait) / 1000).toFixed(1)} s as Retry-After asked`);
    await ctx.sleep(Math.max(0, wait) + MARGIN_MS);
    // A 429 is the answer to judge; a transient 5xx is retried as anywhere else.
    const retry = await ctx.client.send(requestFor(burst.limitedEndpoint, { token: VALID_TOKEN }), {
      observe429: true,
    });
    if (retry.response.status === 429) {
      return {
        verdict: 'fail',
        message: `Expected the request to be admitted once Retry-After ("${latest.exchange.response.headers['retry-after']}") had elapsed; got ${describeResponse(retry)}. Fix: compute Retry-After from the limit's real state (time until a request would be admitted), rounded up.`,
        reproduction: reproductionOf(retry),
      };
    }
    return {
      verdict: 'pass',
      message: `admitted (${retry.response.status}) after waiting Retry-After "${latest.exchange.response.headers['retry-after']}"`,
    };
  },
};
