import { type Check, describeResponse } from '../check.ts';
import { curlFor } from '../curl.ts';
import { observeBurst } from './burst.ts';

export const no5xxUnderBurst: Check = {
  id: 'ratelimit.no-5xx-under-burst',
  title: 'Under a burst the gateway signals limits with 429, never a 5xx or a dropped connection',
  specRef: '§8',
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    const broken = burst.exchanges.find(
      ({ exchange }) => exchange.response.status === 0 || exchange.response.status >= 500,
    );
    if (broken) {
      return {
        verdict: 'fail',
        message: `Expected 2xx or 429 for every request of a ${burst.requests}-request burst; got ${describeResponse(broken.exchange)}. Fix: shed load with 429 rate_limited (section 8), not with server errors.`,
        reproduction: { curl: curlFor(broken.exchange) },
      };
    }
    return { verdict: 'pass', message: `${burst.requests} burst requests, none answered 5xx or dropped` };
  },
};
