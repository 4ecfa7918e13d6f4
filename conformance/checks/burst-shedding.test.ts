import { describe, expect, it } from 'vitest';
import type { Exchange, SuiteRequest } from '../model/suite-request.ts';
import { LIMIT_AS_503, observeBurst } from './burst-observation.ts';
import type { CheckContext, Endpoint } from './check-contract.ts';
import { rateLimitBurst } from './rate-limit-burst.ts';

const WHOAMI: Endpoint = { name: 'whoami', method: 'GET', path: '/v1/whoami' };
const SEARCH: Endpoint = {
  name: 'web.search',
  method: 'POST',
  path: '/v1/web/search',
  body: '{"query":"q"}',
};

/**
 * A gateway that sheds load like Envoy's overload manager: more than `threshold` requests in flight get
 * 503 + Retry-After: 1; the admitted ones spend a limiter of `limit` requests (no refill: the verdict must
 * not depend on time). Concurrency is real (a request stays in flight over a few turns of the event loop),
 * time is virtual, so the outcome is the same on any machine.
 */
function sheddingGateway(
  threshold: number,
  limit: number | undefined,
  budget = 300,
  limitStatus: 429 | 503 = 429,
) {
  let inFlight = 0;
  let admitted = 0;
  const waves: number[] = [];
  let sentNow = 0;
  let now = 0;
  const answer = (request: SuiteRequest, status: number, headers: Record<string, string>, code?: string) =>
    ({
      request,
      url: `http://127.0.0.1:1${request.path}`,
      credential: 'valid',
      key: `${request.method} ${request.path} valid`,
      sentHeaders: [],
      response: { status, headers, text: '{}', json: code ? { code } : {} },
      attempts: 1,
      rateLimitExhausted: false,
      transientRetries: 0,
    }) as unknown as Exchange;
  const send = async (request: SuiteRequest) => {
    sentNow += 1;
    queueMicrotask(() => {
      if (sentNow > 0) waves.push(sentNow);
      sentNow = 0;
    });
    if (inFlight >= threshold) return answer(request, 503, { 'retry-after': '1' }, 'overloaded');
    inFlight += 1;
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    inFlight -= 1;
    admitted += 1;
    if (limit === undefined || admitted <= limit) return answer(request, 200, {});
    return limitStatus === 429
      ? answer(request, 429, { 'retry-after': '1' }, 'rate_limited')
      : answer(request, 503, { 'retry-after': '10' }, 'service_unavailable');
  };
  const memos = new Map<string, Promise<unknown>>();
  const ctx = {
    servedEndpoints: [WHOAMI, SEARCH],
    endpoints: { whoami: WHOAMI },
    rateLimitBudget: budget,
    maxWaitSeconds: 10,
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
    log: () => {},
    memo: (key: string, compute: () => Promise<unknown>) => {
      if (!memos.has(key)) memos.set(key, compute());
      return memos.get(key);
    },
    client: { send, remaining: () => undefined },
  } as unknown as CheckContext;
  return { ctx, waves, admitted: () => admitted };
}

describe('a burst against a gateway that sheds load with 503 + Retry-After (spec §7: reduce concurrency)', () => {
  it('meets a limit of 100 served requests although 14 of each wave of 20 are shed: the budget counts what was served', async () => {
    const { ctx } = sheddingGateway(6, 100);
    const burst = await observeBurst(ctx);
    // Met by the burst itself, not only by the retries of the shed requests after it.
    expect(burst.rateLimited.filter((t) => !t.exchange.transientRetries).length).toBeGreaterThan(0);
  });

  it('lowers its concurrency to what the gateway admitted once shed, instead of sending waves of 20', async () => {
    const { ctx, waves } = sheddingGateway(6, undefined, 120);
    await observeBurst(ctx);
    // The first wave is 20 (6 admitted), every later wave of the burst is 6 or 7 (one more after a clean wave).
    expect(waves[0]).toBe(20);
    // The retries of the shed requests come after the burst, one at a time (waves of 1).
    const burstWaves = waves.slice(1).filter((size) => size > 1);
    expect(burstWaves.length).toBeGreaterThan(10);
    for (const size of burstWaves) expect(size).toBeLessThanOrEqual(7);
  });

  it('stays bounded when the gateway sheds everything: at most the budget of shed requests, then their retries', async () => {
    const { ctx, admitted } = sheddingGateway(0, undefined, 30);
    const burst = await observeBurst(ctx);
    expect(admitted()).toBe(0);
    // 30 shed (the budget), each retried three times at most.
    expect(burst.requests).toBe(30);
    expect(burst.serverErrors.length).toBe(30);
  });

  it('with no limit met, the message counts the served requests and names the shed ones apart', async () => {
    const { ctx } = sheddingGateway(6, undefined, 60);
    const outcome = await rateLimitBurst.run(ctx);
    expect(outcome.verdict).toBe('inconclusive');
    expect(outcome.message).toMatch(
      /^no 429 within 60 requests the gateway served \(and \d+ it shed with 503 \+ Retry-After, not counted\)/,
    );
  });

  it('a refusal with 503 + Retry-After that persists one request at a time is a limit: the 429 rule fails, saying what was seen', async () => {
    // No shedding under load (threshold beyond any wave): 12 served, then every call refused 503 + Retry-After.
    const { ctx, waves } = sheddingGateway(1000, 12, 300, 503);
    const burst = await observeBurst(ctx);
    expect(burst.limitAs503?.shed).toHaveLength(LIMIT_AS_503);
    expect(burst.limitAs503?.servedBefore).toBe(12);
    // The burst stopped once it had seen that much: not the whole budget of shed requests.
    expect(burst.requests).toBeLessThan(60);
    expect(waves.slice(-LIMIT_AS_503 * 2).every((size) => size === 1)).toBe(true);
    const outcome = await rateLimitBurst.run(ctx);
    expect(outcome.verdict).toBe('fail');
    expect(outcome.message).toMatch(
      /^Expected the rate limit .* to answer 429 .*; got 503 .*service_unavailable.* with Retry-After "10" to 5 calls in a row sent one at a time .* after the gateway had served 12 of the burst: .*depends on the count of calls in a window, not on load/,
    );
  });

  it('load shedding alone (503 only while more than 6 are in flight) is never read as a limit', async () => {
    const { ctx } = sheddingGateway(6, undefined, 120);
    const burst = await observeBurst(ctx);
    expect(burst.limitAs503).toBeUndefined();
    expect((await rateLimitBurst.run(ctx)).verdict).toBe('inconclusive');
  });
});
