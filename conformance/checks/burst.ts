import type { CheckContext, Endpoint } from '../check.ts';
import type { Exchange } from '../http-client.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

export interface TimedExchange {
  exchange: Exchange;
  /** Local time the response arrived (ms). */
  receivedAt: number;
}

/** What one bounded burst with the valid token showed; shared by the ratelimit.* checks. */
export interface BurstObservation {
  exchanges: TimedExchange[];
  rateLimited: TimedExchange[];
  /** The endpoint whose burst first met a 429 (the one to retry after waiting). */
  limitedEndpoint?: Endpoint;
  requests: number;
  budget: number;
}

const WAVE = 20;

/**
 * Sends waves of concurrent requests with the valid token (whoami, then search, then fetch, each with a
 * share of the budget) until a 429 appears or the budget is spent. 429s are observed as they are: the
 * client does not retry them here.
 */
export function observeBurst(ctx: CheckContext): Promise<BurstObservation> {
  return ctx.memo('burst', async () => {
    const targets = [ctx.endpoints.whoami, ctx.endpoints['web.search'], ctx.endpoints['web.fetch']];
    const share = Math.max(1, Math.floor(ctx.rateLimitBudget / targets.length));
    const exchanges: TimedExchange[] = [];
    let limitedEndpoint: Endpoint | undefined;
    for (const endpoint of targets) {
      for (let sent = 0; sent < share && !limitedEndpoint; ) {
        const size = Math.min(WAVE, share - sent);
        sent += size;
        const wave = await Promise.all(
          Array.from({ length: size }, async () => {
            const exchange = await ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }), {
              raw: true,
            });
            return { exchange, receivedAt: Date.now() };
          }),
        );
        exchanges.push(...wave);
        if (wave.some((t) => t.exchange.response.status === 429)) limitedEndpoint = endpoint;
      }
      if (limitedEndpoint) break;
    }
    ctx.log(
      `  burst: ${exchanges.length} requests, ${exchanges.filter((t) => t.exchange.response.status === 429).length} answered 429`,
    );
    return {
      exchanges,
      rateLimited: exchanges.filter((t) => t.exchange.response.status === 429),
      limitedEndpoint,
      requests: exchanges.length,
      budget: ctx.rateLimitBudget,
    };
  });
}

/** The verdict when the burst met no 429: inconclusive, never a failure (limits may be higher than the budget). */
export const noRateLimitSeen = (burst: BurstObservation) => ({
  verdict: 'inconclusive' as const,
  message: `no 429 within ${burst.requests} requests (--rate-limit-budget ${burst.budget}); raise the budget or lower the limit to check this`,
});
