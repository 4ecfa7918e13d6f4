import { parseRetryAfter } from '../../vocabulary/retry-after.ts';
import { reproductionOf } from '../client/recorded-exchange.ts';
import { noRateLimitSeen, observeBurst } from './burst-observation.ts';
import { type Check, describeResponse } from './check-contract.ts';

export const retryAfterFormat: Check = {
  id: 'ratelimit.retry-after-format',
  title: 'Retry-After, when present on a 429, is delay-seconds or an HTTP-date',
  specRef: [{ section: 8, note: 'RFC 9110 §10.2.3' }],
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
    if (burst.rateLimited.length === 0) return noRateLimitSeen(burst);
    const withHeader = burst.rateLimited.filter(
      ({ exchange }) => exchange.response.headers['retry-after'] !== undefined,
    );
    if (withHeader.length === 0) {
      return {
        verdict: 'skipped',
        message: 'the 429s carried no Retry-After (it is optional): nothing to check',
      };
    }
    const all = [...withHeader.map(({ exchange }) => exchange), ...(ctx.client.seen429?.() ?? [])];
    const badExchange = all.find(
      (exchange) =>
        exchange.response.headers['retry-after'] !== undefined &&
        !parseRetryAfter(exchange.response.headers['retry-after'] as string),
    );
    const bad = badExchange && { exchange: badExchange };
    if (bad) {
      const value = bad.exchange.response.headers['retry-after'];
      return {
        verdict: 'fail',
        message: `Expected Retry-After as whole seconds (e.g. "3") or an HTTP-date (e.g. "Sat, 21 Nov 2026 01:57:55 GMT"); got "${value}" on ${describeResponse(bad.exchange)}. Fix: send an integer number of seconds, rounded up.`,
        reproduction: reproductionOf(bad.exchange),
      };
    }
    return { verdict: 'pass', message: `${withHeader.length} Retry-After values, all well-formed` };
  },
};
