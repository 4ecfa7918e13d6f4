import { type Check, CheckFailure, describeResponse, failureMessage } from '../check.ts';
import { reproductionOf } from '../exchange-record.ts';
import { burstFailure, burstScript, observeBurst, SPORADIC } from './burst.ts';

const FIX = 'shed load with 429 rate_limited (section 8), not with server errors or dropped connections';

export const no5xxUnderBurst: Check = {
  id: 'ratelimit.no-5xx-under-burst',
  title:
    'Under a burst the gateway signals limits with 429, never a 5xx or a dropped connection (a transient 5xx that a retry clears is tolerated)',
  specRef: [{ section: 8 }, { section: 7 }],
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    const broken = burst.serverErrors[0];
    if (broken) {
      const failure = new CheckFailure({
        expected: `2xx or 429 for every request of a ${burst.requests}-request burst`,
        actual: describeResponse(broken.exchange),
        fix: FIX,
        exchange: broken.exchange,
        aboutServerErrors: true,
      });
      return burstFailure(burst, broken.exchange, failureMessage(failure));
    }
    // A few 5xx now and then are transient failures (spec section 7), cleared by a retry. Many, once the
    // burst is on, are the limit signalled by 5xx (nginx's limit_req answers 503 by default).
    const { transient } = burst;
    if (transient.length > SPORADIC.count && transient.length > SPORADIC.share * burst.requests) {
      const first = transient[0]?.exchange;
      const status = first?.transientStatus ?? first?.response.status ?? '5xx';
      return {
        verdict: 'fail',
        message: `Expected 2xx or 429 under a burst, with at most a few transient 5xx; got ${transient.length} of ${burst.requests} burst requests answered ${status} (or another 5xx) at first, whether a retry cleared them or not: that is load shed with server errors. Fix: ${FIX}`,
        ...(first && { reproduction: { ...reproductionOf(first), script: burstScript(burst) } }),
      };
    }
    const cleared =
      transient.length > 0 ? ` (${transient.length} transient 5xx, each cleared by a retry)` : '';
    return {
      verdict: 'pass',
      message: `${burst.requests} burst requests, none answered 5xx or dropped${cleared}`,
    };
  },
};
