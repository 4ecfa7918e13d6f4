import { describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createClock } from '../mock-server/clock.ts';
import type { RateLimitRule } from '../mock-server/config/schema.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { call, search } from './support/call.ts';
import { fc, test } from './support/property.ts';

const limited = (rule: Partial<RateLimitRule>, extra: Record<string, unknown> = {}) =>
  createGateway({
    clock: createClock({ frozen: true, startAt: Date.parse('2026-06-01T12:00:00Z') }),
    config: {
      rate_limits: {
        rules: [
          { name: 'r', scope: 'agent', algorithm: 'fixed_window', limit: 5, window_seconds: 10, ...rule },
        ],
        ...extra,
      },
    },
  });

describe('rate limits through the gateway', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 30 }),
      fc.constantFrom('token_bucket' as const, 'fixed_window' as const, 'sliding_window' as const),
    ],
    { numRuns: 12 },
  )(
    'a burst of N concurrent HTTP requests against a limit L admits exactly min(N, L)',
    async (n, limit, algorithm) => {
      const gateway = limited({ limit, algorithm }, { concurrency: { per_agent: 1000 } });
      const server = await serve(gateway, { port: 0 });
      try {
        const token = gateway.mintToken('agent-verified');
        const statuses = await Promise.all(
          Array.from({ length: n }, () => search(server.url, token).then((r) => r.status)),
        );
        expect(statuses.filter((s) => s === 200)).toHaveLength(Math.min(n, limit));
        expect(statuses.filter((s) => s === 429)).toHaveLength(n - Math.min(n, limit));
      } finally {
        await server.close();
      }
    },
  );

  test.prop(
    [
      fc.constantFrom('token_bucket' as const, 'fixed_window' as const, 'sliding_window' as const),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 120 }),
      fc.array(fc.integer({ min: 0, max: 4000 }), { minLength: 1, maxLength: 25 }),
    ],
    { numRuns: 40 },
  )(
    'after waiting the Retry-After of a 429 (virtual clock), the request is admitted',
    async (algorithm, limit, windowSeconds, gaps) => {
      const gateway = limited({ algorithm, limit, window_seconds: windowSeconds });
      const token = gateway.mintToken('agent-verified');
      for (const gap of gaps) {
        gateway.clock.advance(gap);
        const response = await call(gateway, 'GET', '/v1/whoami', { token });
        if (response.status === 200) continue;
        expect(response.status).toBe(429);
        expect(response.body.code).toBe('rate_limited');
        const seconds = Number(response.headers.get('retry-after'));
        expect(Number.isInteger(seconds) && seconds >= 1).toBe(true);
        gateway.clock.advance(seconds * 1000);
        expect((await call(gateway, 'GET', '/v1/whoami', { token })).status).toBe(200);
      }
    },
  );

  it('one agent at its limit does not limit another', async () => {
    const gateway = limited({ limit: 2 });
    const early = gateway.mintToken('agent-verified');
    const other = gateway.mintToken('agent-allowlisted');
    const first = await Promise.all([1, 2, 3].map(() => search(gateway, early)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 429]);
    expect((await search(gateway, other)).status).toBe(200);
  });

  it('429 answers carry the rule, RateLimit headers and a Date on the gateway clock', async () => {
    const gateway = limited({ limit: 1, window_seconds: 30 });
    const token = gateway.mintToken('agent-verified');
    const ok = await search(gateway, token);
    expect(ok.headers.get('ratelimit-policy')).toBe('"r";q=1;w=30');
    expect(ok.headers.get('ratelimit')).toBe('"r";r=0;t=30');
    const refused = await search(gateway, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'rate_limited',
      rule: 'r',
      scope: 'agent',
      limit: 1,
      retry_after_seconds: 30,
    });
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.headers.get('date')).toBe(new Date(gateway.clock.now()).toUTCString());
  });

  test.prop(
    [
      fc.constantFrom('token_bucket' as const, 'fixed_window' as const, 'sliding_window' as const),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 1, max: 120 }),
      fc.constantFrom('seconds' as const, 'http-date' as const),
      fc.integer({ min: 0, max: 999 }),
    ],
    { numRuns: 40 },
  )(
    "a 429's RateLimit `t` and Retry-After come from one computation on the gateway clock, as does Date",
    async (algorithm, limit, windowSeconds, format, startMs) => {
      const gateway = createGateway({
        clock: createClock({ frozen: true, startAt: Date.parse('2026-06-01T12:00:00Z') + startMs }),
        config: {
          rate_limits: {
            retry_after: format,
            rules: [{ name: 'r', scope: 'agent', algorithm, limit, window_seconds: windowSeconds }],
          },
        },
      });
      const token = gateway.mintToken('agent-verified');
      const clockDate = new Date(gateway.clock.now()).toUTCString();
      let refused: Awaited<ReturnType<typeof search>> | undefined;
      for (let i = 0; i <= limit && !refused; i++) {
        const response = await search(gateway, token);
        expect(response.headers.get('date')).toBe(clockDate);
        if (response.status === 429) refused = response;
      }
      if (!refused) throw new Error('no 429 within the limit');
      const t = Number(/"r";r=0;t=(\d+)/.exec(refused.headers.get('ratelimit') ?? '')?.[1]);
      const retryAfter = refused.headers.get('retry-after') ?? '';
      expect(refused.headers.get('date')).toBe(clockDate);
      expect(refused.body.retry_after_seconds).toBe(t);
      if (format === 'seconds') expect(retryAfter).toBe(String(t));
      else {
        // Read against Date (whole seconds), as a client does: never earlier than t, at most a second later.
        const delta = (Date.parse(retryAfter) - Date.parse(clockDate)) / 1000;
        expect(delta - t).toBeGreaterThanOrEqual(0);
        expect(delta - t).toBeLessThanOrEqual(1);
      }
    },
  );

  it('retry_after: http-date answers an IMF-fixdate that admits once reached', async () => {
    const gateway = limited(
      { limit: 1, window_seconds: 7, algorithm: 'token_bucket' },
      { retry_after: 'http-date' },
    );
    const token = gateway.mintToken('agent-verified');
    await search(gateway, token);
    const refused = await search(gateway, token);
    const retryAt = Date.parse(refused.headers.get('retry-after') ?? '');
    expect(refused.headers.get('retry-after')).toMatch(/GMT$/);
    expect(retryAt - Date.parse(refused.headers.get('date') ?? '')).toBe(7000);
    gateway.clock.set(retryAt);
    expect((await search(gateway, token)).status).toBe(200);
  });

  it('headers: false leaves the RateLimit fields out', async () => {
    const gateway = limited({ limit: 3 }, { headers: false });
    const response = await search(gateway, gateway.mintToken('agent-verified'));
    expect(response.headers.get('ratelimit')).toBeNull();
  });

  it('unauthenticated, forbidden and invalid requests are not counted', async () => {
    const gateway = limited({ limit: 1 });
    const early = gateway.mintToken('agent-early');
    for (let i = 0; i < 3; i++) {
      expect((await call(gateway, 'GET', '/v1/whoami')).status).toBe(401);
      expect((await call(gateway, 'GET', '/v1/whoami', { token: `${early}x` })).status).toBe(401);
      expect((await search(gateway, early)).status).toBe(403);
      expect(
        (await call(gateway, 'POST', '/v1/web/fetch', { token: early, body: { url: 'ftp://x' } })).status,
      ).toBe(400);
    }
    expect((await call(gateway, 'GET', '/v1/whoami', { token: early })).status).toBe(200);
  });
});

describe('concurrency limit', () => {
  it('a request over the per-agent in-flight limit gets 429 reason concurrency, without Retry-After', async () => {
    const gateway = createGateway({
      config: {
        rate_limits: { rules: [], concurrency: { per_agent: 2 } },
        tools: { 'web.search': { latency_ms: 150 } },
      },
    });
    const token = gateway.mintToken('agent-verified');
    const results = await Promise.all([1, 2, 3, 4].map(() => search(gateway, token)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
    const refused = results.find((r) => r.status === 429);
    expect(refused?.body).toMatchObject({ code: 'rate_limited', reason: 'concurrency', limit: 2 });
    expect(refused?.headers.get('retry-after')).toBeNull();
    // Slots are given back: once those finished, new calls are admitted again.
    expect((await search(gateway, token)).status).toBe(200);
    expect(gateway.runtime.concurrency.current('agent-verified')).toBe(0);
  });

  it('per_agent: null switches the concurrency limit off', async () => {
    const gateway = createGateway({
      config: {
        rate_limits: { rules: [], concurrency: { per_agent: null } },
        tools: { 'web.search': { latency_ms: 50 } },
      },
    });
    const token = gateway.mintToken('agent-verified');
    const results = await Promise.all(Array.from({ length: 40 }, () => search(gateway, token)));
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
  });
});
