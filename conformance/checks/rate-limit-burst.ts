import { type Check, CheckFailure, describeResponse } from '../check.ts';
import { curlFor } from '../curl.ts';
import { noRateLimitSeen, observeBurst } from './burst.ts';
import { expectError } from './support.ts';

export const rateLimitBurst: Check = {
  id: 'ratelimit.burst-429',
  title: 'A bounded burst meets the rate limit as 429 with code rate_limited',
  specRef: '§8, §7',
  level: 'MUST',
  needs: ['token'],
  async run(ctx) {
    const burst = await observeBurst(ctx);
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
        return {
          verdict: 'fail',
          message: `Expected ${error.expected}; got ${describeResponse(exchange)}. Fix: ${error.fix}`,
          reproduction: { curl: curlFor(exchange) },
        };
      }
    }
    return {
      verdict: 'pass',
      message: `${burst.rateLimited.length} of ${burst.requests} burst requests answered 429 rate_limited`,
    };
  },
};
