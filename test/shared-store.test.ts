import type { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import type { GatewayConfigOverlay, RateLimitRule } from '../mock-server/config/schema.ts';
import { createSharedGateway } from '../mock-server/gateway.ts';
import { createRateLimiter } from '../mock-server/limits/rate-limiter.ts';
import type { SearchProvider, SearchResponse } from '../mock-server/providers/search-provider.ts';
import { connectRedis } from '../mock-server/store/redis-connection.ts';
import { createRedisLimits } from '../mock-server/store/redis-limits.ts';
import { fc } from './support/property.ts';
import { describeWithRedis, type RedisProcess, useRedis } from './support/redis.ts';

/** The ioredis client behind the store's own client type, for the commands the store never sends. */
const ioredisOf = (client: unknown) => client as Redis;

type Shared = Awaited<ReturnType<typeof createSharedGateway>>;
const ADMIN = 'admin-key-for-tests';
const START = Date.parse('2031-05-01T12:00:00Z');
let redis: RedisProcess;
let prefixes = 0;

/** `count` instances on the test's Redis under a fresh key prefix, sharing one virtual clock object. */
async function instances(
  count: number,
  overlay: GatewayConfigOverlay,
  clock: ReturnType<typeof createClock> | 'own' = createClock({ frozen: true, startAt: START }),
  more: { searchProvider?: SearchProvider } = {},
) {
  const config = {
    ...overlay,
    store: {
      url: redis.url,
      key_prefix: `t${++prefixes}`,
      lease_seconds: 1,
      timeout_ms: 10_000,
      ...overlay.store,
    },
  } as GatewayConfigOverlay;
  const logs: string[] = [];
  const gateways: Shared[] = [];
  for (let i = 0; i < count; i++)
    gateways.push(
      await createSharedGateway({
        config,
        // 'own': a clock per instance, as separate processes have; the store keeps them in step.
        clock: clock === 'own' ? createClock() : clock,
        adminKey: ADMIN,
        log: (line) => logs.push(line),
        ...more,
      }),
    );
  return {
    gateways,
    clock: clock as ReturnType<typeof createClock>,
    logs,
    close: () => Promise.all(gateways.map((g) => g.close())),
  };
}

/** The Redis limits port alone on the test's Redis, under a fresh key prefix, for `test`; stopped and closed after. */
async function withRedisLimits(
  timeoutMs: number,
  test: (
    connection: Awaited<ReturnType<typeof connectRedis>>,
    limits: ReturnType<typeof createRedisLimits>,
  ) => Promise<void>,
) {
  const connection = await connectRedis({
    url: redis.url,
    keyPrefix: `t${++prefixes}`,
    timeoutMs,
    log: () => {},
  });
  const limits = createRedisLimits(connection, { leaseMs: 60_000 });
  try {
    await test(connection, limits);
  } finally {
    limits.stop();
    await connection.close();
  }
}

const get = (gateway: Shared, path: string, headers: Record<string, string> = {}) =>
  gateway.fetch(new Request(`http://gw.test${path}`, { headers }));
const whoami = (gateway: Shared, token: string) => get(gateway, '/v1/whoami', { 'x-agent-identity': token });
const admin = (gateway: Shared, method: string, path: string, body?: unknown) =>
  gateway.fetch(
    new Request(`http://gw.test/__admin${path}`, {
      method,
      headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
const oneRule = (algorithm: string, limit: number, windowSeconds: number, scope = 'agent') =>
  ({
    rate_limits: {
      rules: [{ name: 'shared', scope, algorithm, limit, window_seconds: windowSeconds }],
      concurrency: { per_agent: null },
    },
  }) as GatewayConfigOverlay;

describeWithRedis('shared state on Redis: several instances, one set of limits', () => {
  redis = useRedis();

  for (const algorithm of ['token_bucket', 'fixed_window', 'sliding_window']) {
    for (const count of [2, 3]) {
      it(`${algorithm}: 1,000 concurrent requests over ${count} instances admit exactly the limit`, async () => {
        const limit = 37;
        const { gateways, close } = await instances(count, oneRule(algorithm, limit, 3600));
        try {
          const token = (gateways[0] as Shared).mintToken('agent-verified');
          const answers = await Promise.all(
            Array.from({ length: 1000 }, (_, i) => whoami(gateways[i % count] as Shared, token)),
          );
          const statuses = answers.map((a) => a.status);
          expect(statuses.filter((s) => s === 200)).toHaveLength(limit);
          expect(statuses.filter((s) => s === 429)).toHaveLength(1000 - limit);
          // Every instance admitted some and refused some: they shared one count, not three.
          for (let i = 0; i < count; i++)
            expect(statuses.filter((s, k) => k % count === i && s === 429).length).toBeGreaterThan(0);
        } finally {
          await close();
        }
      }, 60_000);
    }
  }

  for (const algorithm of ['token_bucket', 'fixed_window', 'sliding_window']) {
    it(`${algorithm}: the Retry-After one instance gives is truthful on every instance`, async () => {
      const { gateways, clock, close } = await instances(3, oneRule(algorithm, 3, 10));
      const [a, b, c] = gateways as [Shared, Shared, Shared];
      try {
        const token = a.mintToken('agent-verified');
        for (const g of [a, b, c]) expect((await whoami(g, token)).status).toBe(200);
        const refused = await whoami(a, token);
        expect(refused.status).toBe(429);
        const page = (await (await admin(a, 'GET', '/journal?limit=1')).json()) as {
          entries: { retry_after_ms: number; status: number }[];
        };
        const waitMs = page.entries[0]?.retry_after_ms as number;
        expect(waitMs).toBeGreaterThan(0);
        expect(Number(refused.headers.get('retry-after'))).toBe(Math.ceil(waitMs / 1000));
        clock.advance(waitMs - 1);
        expect((await whoami(b, token)).status).toBe(429);
        clock.advance(1);
        expect((await whoami(c, token)).status).toBe(200);
      } finally {
        await close();
      }
    }, 30_000);
  }

  it('the Redis script decides exactly as the in-memory algorithms, clock set back included', async () => {
    const subject = { agentId: 'agent-a', tier: 'verified', generation: 0 };
    await withRedisLimits(2000, async (_connection, limits) => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('token_bucket', 'fixed_window', 'sliding_window' as const),
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 5000 }),
          // Gaps in ms: bursts (0), small steps, and a virtual clock set back (negative).
          fc.array(
            fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 700 }), fc.integer({ min: -30, max: -1 })),
            { minLength: 1, maxLength: 40 },
          ),
          async (algorithm, limit, windowMs, gaps) => {
            const rules: RateLimitRule[] = [
              { name: 'r', scope: 'agent', algorithm, limit, window_seconds: windowMs / 1000 },
            ];
            const memory = createRateLimiter(rules);
            await limits.forget();
            let now = 1_900_000_000_000;
            for (const gap of gaps) {
              now += gap < 0 ? gap * 100 : gap;
              const expected = memory.admit(subject, 'whoami', now);
              const shared = await limits.admit(rules, subject, 'whoami', now, null);
              if (shared.kind !== 'decided') throw new Error(`unexpected ${shared.kind}`);
              if (shared.lease) limits.release(subject.agentId, shared.lease);
              const pick = (r: typeof expected) =>
                r.outcomes.map((o) => ({
                  allowed: o.allowed,
                  remaining: o.remaining,
                  retryAfterMs: o.retryAfterMs,
                  nextMs: o.nextMs,
                }));
              expect(pick(shared.result)).toEqual(pick(expected));
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  }, 60_000);

  it("a live instance renews its requests' leases; a released lease is gone", async () => {
    const subject = { agentId: 'agent-a', tier: 'verified', generation: 0 };
    await withRedisLimits(10_000, async (connection, limits) => {
      const leases = connection.key('lease:agent-a');
      const redisNow = async () => {
        const [seconds, micros] = (await ioredisOf(connection.redis).time()) as unknown as [string, string];
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      };
      const admitted = await limits.admit([], subject, 'whoami', Date.now(), 5);
      if (admitted.kind !== 'decided' || !admitted.lease) throw new Error('not admitted');
      const first = Number(await ioredisOf(connection.redis).zscore(leases, admitted.lease));
      // Until Redis's clock shows a later millisecond than the lease was taken at.
      const taken = await redisNow();
      while ((await redisNow()) <= taken) await new Promise((r) => setTimeout(r, 1));
      await limits.renew();
      expect(Number(await ioredisOf(connection.redis).zscore(leases, admitted.lease))).toBeGreaterThan(first);
      limits.release(subject.agentId, admitted.lease);
      await limits.renew();
      expect(await ioredisOf(connection.redis).zscore(leases, admitted.lease)).toBeNull();
    });
  }, 30_000);

  it('a token revoked through one instance is refused by all of them', async () => {
    const { gateways, close } = await instances(3, oneRule('fixed_window', 1000, 60));
    const [a, b, c] = gateways as [Shared, Shared, Shared];
    try {
      const token = b.mintToken('agent-early');
      for (const g of gateways) expect((await whoami(g, token)).status).toBe(200);
      expect((await admin(a, 'POST', '/agents/agent-early/revoke-tokens')).status).toBe(200);
      for (const g of [a, b, c]) {
        const answer = await whoami(g, token);
        expect(answer.status).toBe(401);
        expect(((await answer.json()) as { reason: string }).reason).toBe('revoked');
      }
    } finally {
      await close();
    }
  }, 30_000);

  it('admin changes made through one instance take effect on the others (agents, tools, faults, clock, scenario, reset)', async () => {
    const { gateways, close } = await instances(2, oneRule('fixed_window', 1000, 60), 'own');
    const [a, b] = gateways as [Shared, Shared];
    /** Polls `read` on the other instance until `done` (a pub/sub delivery away), with a generous deadline. */
    const eventually = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
      const deadline = Date.now() + 15_000;
      let value = await read();
      while (!done(value) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        value = await read();
      }
      return value;
    };
    const json = async (answer: Promise<Response>) =>
      (await answer).json() as Promise<Record<string, unknown>>;
    try {
      const token = a.mintToken('agent-early');
      expect((await whoami(b, token)).status).toBe(200);
      // An agent disabled through A is refused by B.
      await admin(a, 'PATCH', '/agents/agent-early', { disabled: true });
      const refused = await eventually(
        () => whoami(b, token),
        (r) => r.status === 401,
      );
      expect(((await refused.json()) as { reason: string }).reason).toBe('agent_disabled');
      // A tool disabled through A is disabled on B.
      await admin(a, 'PATCH', '/tools/web.fetch', { enabled: false });
      const tools = await eventually(
        () => json(admin(b, 'GET', '/tools')),
        (t) => (t.tools as Record<string, { enabled: boolean }>)['web.fetch']?.enabled === false,
      );
      expect((tools.tools as Record<string, { enabled: boolean }>)['web.fetch']?.enabled).toBe(false);
      // The clock frozen and advanced through A shows the same time on B.
      await admin(a, 'POST', '/clock/freeze');
      const clockA = await json(admin(a, 'POST', '/clock/advance', { seconds: 7200 }));
      const clockB = await eventually(
        () => json(admin(b, 'GET', '/clock')),
        (c) => c.now === clockA.now,
      );
      expect(clockB).toEqual(clockA);
      // A fault armed through A with count 2 strikes twice in all, whichever instance the requests reach.
      const verified = a.mintToken('agent-verified');
      await admin(a, 'POST', '/faults', {
        kind: 'status',
        status: 502,
        count: 2,
        match: { operation: 'whoami' },
      });
      await eventually(
        () => json(admin(b, 'GET', '/faults')),
        (f) => (f.faults as unknown[]).length === 1,
      );
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await whoami(i % 2 ? a : b, verified)).status);
      expect(statuses.filter((s) => s === 502)).toHaveLength(2);
      // A scenario loaded through A is in force on B: its limit counts requests on both.
      await admin(a, 'POST', '/scenario', { name: 'burst-429' });
      await eventually(
        () => json(admin(b, 'GET', '/scenario')),
        (s) => (s.scenario as { name?: string } | null)?.name === 'burst-429',
      );
      const search = (g: Shared) =>
        g.fetch(
          new Request('http://gw.test/v1/web/search', {
            method: 'POST',
            headers: { 'x-agent-identity': verified, 'content-type': 'application/json' },
            body: JSON.stringify({ query: 'shared limits' }),
          }),
        );
      const searches: number[] = [];
      for (let i = 0; i < 8; i++) searches.push((await search(i % 2 ? a : b)).status);
      expect(searches).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      // Reset through A: B is back to the base config too.
      await admin(a, 'POST', '/reset');
      const after = await eventually(
        () => json(admin(b, 'GET', '/scenario')),
        (s) => s.scenario === null,
      );
      expect(after.scenario).toBeNull();
    } finally {
      await close();
    }
  }, 60_000);

  it('idempotency keys hold across instances: 409 while running, replay after, 422 for another request', async () => {
    // The first search waits at its tool until the test opens the gate: no race with real time.
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const searchProvider: SearchProvider = {
      search: async (request) => {
        await gate;
        return { query: request.query, results: [] } as unknown as SearchResponse;
      },
    };
    const { gateways, close } = await instances(2, {}, undefined, { searchProvider });
    const [a, b] = gateways as [Shared, Shared];
    try {
      const token = a.mintToken('agent-verified');
      const post = (g: Shared, query: string) =>
        g.fetch(
          new Request('http://gw.test/v1/web/search', {
            method: 'POST',
            headers: {
              'x-agent-identity': token,
              'content-type': 'application/json',
              'idempotency-key': 'k-1',
            },
            body: JSON.stringify({ query }),
          }),
        );
      const first = post(a, 'redis streams');
      // Once the first request holds the key (its tool is held at the gate), the same request on the other
      // instance is 409.
      const { redis: client } = a.runtime.shared?.connection ?? {};
      while ((await (client && ioredisOf(client).keys('*idem*')))?.length === 0)
        await new Promise((r) => setTimeout(r, 5));
      const clash = await post(b, 'redis streams');
      expect(clash.status).toBe(409);
      open();
      const done = await first;
      expect(done.status).toBe(200);
      const replay = await post(b, 'redis streams');
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe(await done.text());
      expect((await post(b, 'something else')).status).toBe(422);
      // A reset through either instance forgets the keys on all of them, as in memory.
      expect((await admin(a, 'POST', '/reset')).status).toBe(200);
      expect((await post(b, 'something else')).status).toBe(200);
    } finally {
      await close();
    }
  }, 30_000);

  it('an exchange is kept sealed in Redis and read, redacted, from every instance', async () => {
    const { gateways, close } = await instances(2, oneRule('fixed_window', 100, 10));
    const [a, b] = gateways as [Shared, Shared];
    try {
      const token = a.mintToken('agent-verified');
      const answer = await a.fetch(
        new Request(`http://gw.test/v1/whoami?apikey=ak_verified_2b8d4f6a1c9e&note=${token}`, {
          headers: { 'x-agent-identity': token },
        }),
      );
      expect(answer.status).toBe(200);
      type Exchange = { response_headers: [string, string][]; query?: string; response_body?: string };
      let entries: { exchange?: Exchange }[] = [];
      for (let tries = 0; tries < 200 && entries.length < 1; tries++)
        entries = (
          (await (await admin(b, 'GET', '/journal?agent=agent-verified')).json()) as {
            entries: typeof entries;
          }
        ).entries;
      const exchange = entries[0]?.exchange as Exchange;
      // The other instance opened and redacted it: the query and answer are there, the token and key are not.
      expect(exchange.response_headers.map(([name]) => name)).toContain('ratelimit-policy');
      expect(exchange.query).toMatch(/^apikey=\[REDACTED\]&note=\S+$/);
      expect(JSON.stringify(exchange)).not.toContain(token);
      expect(JSON.stringify(exchange)).not.toContain('ak_verified_2b8d4f6a1c9e');
      expect(exchange.response_body).toContain('agent-verified');
      // The same from the instance that wrote it, and in its export.
      const own = (await (await admin(a, 'GET', '/journal?agent=agent-verified')).json()) as {
        entries: typeof entries;
      };
      expect(own.entries[0]?.exchange).toEqual(exchange);
      // Redis holds it sealed: neither the token, nor its parts, nor the response's text.
      const raw = JSON.stringify(
        await ioredisOf(a.runtime.shared?.connection.redis).xrange(`t${prefixes}:journal`, '-', '+'),
      );
      expect(raw).not.toContain(token.slice(0, 24));
      expect(raw).not.toContain('ak_verified');
      expect(raw).not.toContain('ratelimit-policy');
      expect(raw).not.toContain('Verified agent');
    } finally {
      await close();
    }
  }, 30_000);

  it("the journal and client report of any instance see every instance's requests", async () => {
    const { gateways, close } = await instances(2, oneRule('fixed_window', 2, 10));
    const [a, b] = gateways as [Shared, Shared];
    try {
      const token = a.mintToken('agent-verified');
      // A retry loop hopping between instances, ignoring Retry-After: the report must see all of it.
      for (let i = 0; i < 6; i++) await whoami(i % 2 === 0 ? a : b, token);
      let entries: { seq: number; status: number }[] = [];
      for (let tries = 0; tries < 200 && entries.length < 6; tries++) {
        entries = (
          (await (await admin(b, 'GET', '/journal?agent=agent-verified')).json()) as {
            entries: typeof entries;
          }
        ).entries;
      }
      expect(entries.map((e) => e.status)).toEqual([200, 200, 429, 429, 429, 429]);
      expect(entries.map((e) => e.seq)).toEqual([...entries.map((e) => e.seq)].sort((x, y) => x - y));
      // The NDJSON export of the other instance streams the same entries.
      const exported = await (await admin(a, 'GET', '/journal/export?agent=agent-verified')).text();
      expect(
        exported
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      ).toEqual(entries);
      // Strict options: these requests come within milliseconds, inside the default grace period.
      const report = (await (
        await admin(a, 'GET', '/report?agent=agent-verified&grace_ms=0&retry_cap=2')
      ).json()) as {
        requests: number;
        violations: { rule: string }[];
      };
      expect(report.requests).toBe(6);
      expect(report.violations.length).toBeGreaterThan(0);
    } finally {
      await close();
    }
  }, 30_000);

  it('an instance whose config differs from the one its key prefix holds refuses to start, saying how to fix it', async () => {
    const { close } = await instances(1, oneRule('fixed_window', 5, 60, 'agent'));
    try {
      const config = {
        ...oneRule('fixed_window', 6, 60),
        store: { url: redis.url, key_prefix: `t${prefixes}` },
      } as GatewayConfigOverlay;
      await expect(createSharedGateway({ config, log: () => {} })).rejects.toThrow(
        /holds the state of a gateway with another config under the key prefix "t\d+".*another store\.key_prefix/,
      );
    } finally {
      await close();
    }
  }, 30_000);

  it('a Redis that hangs: 503 once the configured timeout passes, never a request left hanging', async () => {
    const { gateways, close } = await instances(1, {
      ...oneRule('fixed_window', 50, 3600),
      store: { timeout_ms: 300 },
    } as GatewayConfigOverlay);
    const [a] = gateways as [Shared];
    try {
      const token = a.mintToken('agent-verified');
      expect((await whoami(a, token)).status).toBe(200);
      // Stopped, not gone: the connection stays open and nothing answers on it.
      process.kill(redis.pid, 'SIGSTOP');
      let answers: Response[];
      try {
        // Every route that waits for the store: a tool call with an Idempotency-Key, the journal (which
        // first waits for this instance's last write), a reset (several round trips).
        answers = [
          await whoami(a, token),
          await a.fetch(
            new Request('http://gw.test/v1/web/search', {
              method: 'POST',
              headers: {
                'x-agent-identity': token,
                'content-type': 'application/json',
                'idempotency-key': 'k1',
              },
              body: JSON.stringify({ query: 'q' }),
            }),
          ),
          await admin(a, 'GET', '/journal'),
          await admin(a, 'GET', '/journal/export'),
          await admin(a, 'GET', '/export?format=har'),
          await admin(a, 'POST', '/reset'),
        ];
      } finally {
        process.kill(redis.pid, 'SIGCONT');
      }
      const bodies: { code: string; message: string }[] = [];
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        bodies.push((await answer.json()) as { code: string; message: string });
      }
      expect(bodies.map((b) => b.code)).toEqual(Array(6).fill('state_store_unavailable'));
      // The admin change's 503 says what a client must know: it may or may not have been made.
      expect(bodies[5]?.message).toMatch(/may or may not have been made.*read the state back/);
      expect(bodies[0]?.message).not.toMatch(/may or may not have been made/);
      let after = await whoami(a, token);
      for (let tries = 0; after.status === 503 && tries < 300; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        after = await whoami(a, token);
      }
      expect(after.status).toBe(200);
    } finally {
      await close();
    }
  }, 60_000);

  it('a Redis that goes away: 503 state_store_unavailable JSON meanwhile, correct limits once it is back', async () => {
    const { gateways, close, logs } = await instances(2, oneRule('fixed_window', 5, 3600));
    const [a, b] = gateways as [Shared, Shared];
    try {
      const token = a.mintToken('agent-verified');
      expect((await whoami(a, token)).status).toBe(200);
      await redis.stop();
      for (const g of [a, b]) {
        const answer = await whoami(g, token);
        expect(answer.status).toBe(503);
        expect(answer.headers.get('content-type')).toBe('application/json');
        expect(((await answer.json()) as { code: string }).code).toBe('state_store_unavailable');
      }
      await redis.restart();
      // Back once the clients reconnect (they retry on their own every 100 ms to 1 s).
      let answer = await whoami(a, token);
      for (let tries = 0; answer.status === 503 && tries < 300; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        answer = await whoami(a, token);
      }
      for (let tries = 0; (await whoami(b, token)).status === 503 && tries < 300; tries++)
        await new Promise((r) => setTimeout(r, 50));
      // The restarted Redis is empty: two were just admitted (one per instance), so three remain.
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => whoami(i % 2 ? a : b, token)));
      expect(burst.filter((r) => r.status === 200)).toHaveLength(3);
      expect(logs.some((line) => /unavailable/.test(line))).toBe(true);
    } finally {
      await close();
    }
  }, 60_000);
});
