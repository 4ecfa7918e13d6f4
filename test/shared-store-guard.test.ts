import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectRedis, type RedisConnection } from '../mock-server/store/redis-connection.ts';
import {
  drawnRecord,
  GUARD_SCRIPT,
  type StoreGuard,
  startStoreGuard,
} from '../mock-server/store/store-guard.ts';
import { describeWithRedis, type RedisProcess, startRedis } from './support/redis.ts';

// The guard's rounds are run by hand (`check`), its timer set far out: the order of events is the test's.
const NEVER = 3_600_000;
let redis: RedisProcess;
let prefixes = 0;

describeWithRedis(
  'the store guard after a wipe: the oldest signing secret wins, a newcomer gives way',
  () => {
    const open: { connection: RedisConnection; guard: StoreGuard }[] = [];
    beforeAll(async () => {
      redis = await startRedis();
    }, 30_000);
    afterAll(async () => {
      for (const { connection, guard } of open) {
        guard.stop();
        await connection.close();
      }
      await redis?.stop();
      redis?.cleanup();
    }, 30_000);

    const instance = async (keyPrefix: string, logs: string[] = []) => {
      const connection = await connectRedis({
        url: redis.url,
        keyPrefix,
        timeoutMs: 5000,
        log: (l) => logs.push(l),
      });
      // No grace: a store without a secret makes this instance draw one at once (the stalled-fleet case).
      const guard = await startStoreGuard(connection, { intervalMs: NEVER, startGraceMs: 0 });
      open.push({ connection, guard });
      return guard;
    };

    it('instances started together on an empty store agree at once: the first to write wins, whoever drew first', async () => {
      // Both found no secret and drew their own; the second drew a minute earlier by its own clock (a slower
      // start, a skewed clock) but writes later. Stamped by the instances' clocks, its secret replaced the
      // one the first had already signed a token with, and the two refused each other's tokens.
      const prefix = `g${++prefixes}`;
      const client = new Redis(redis.url);
      const keys = ['marker', 'signing_secret', 'config', 'instance:x', 'signing_secret_drawn'].map(
        (k) => `${prefix}:${k}`,
      );
      const start = (secret: string, atMs: number, by: string) =>
        client.eval(GUARD_SCRIPT, 5, ...keys, 'm', secret, '', '60000', drawnRecord(atMs, by), '1');
      const now = Date.now();
      await start('first-secret', now, 'first');
      const [, , held] = (await start('second-secret', now - 60_000, 'second')) as string[];
      expect(held).toBe('first-secret');
      expect(await client.get(`${prefix}:signing_secret`)).toBe('first-secret');
      client.disconnect();
    });

    it("a newcomer that signed nothing adopts the running instance's secret; the running one never refuses", async () => {
      const prefix = `g${++prefixes}`;
      const running = await instance(prefix);
      const client = new Redis(redis.url);
      await client.flushall();
      const logs: string[] = [];
      const newcomer = await instance(prefix, logs);
      expect(newcomer.secret).not.toBe(running.secret);
      expect(logs.join('\n')).toMatch(/this instance drew one/);
      const adopted: string[] = [];
      newcomer.onSecret((secret) => adopted.push(secret));
      // The running instance wakes: the store's secret was drawn after its own, so its own goes back.
      await running.check();
      expect(await client.get(`${prefix}:signing_secret`)).toBe(running.secret);
      expect(running.refusal).toBeUndefined();
      await newcomer.check();
      expect(newcomer.secret).toBe(running.secret);
      expect(adopted).toEqual([running.secret]);
      expect(newcomer.refusal).toBeUndefined();
      // Settled: further rounds change nothing.
      await running.check();
      await newcomer.check();
      expect([running.refusal, newcomer.refusal, newcomer.secret]).toEqual([
        undefined,
        undefined,
        running.secret,
      ]);
      client.disconnect();
    });

    it('a newcomer that signed with its own secret keeps it and refuses (503); the running one keeps serving', async () => {
      const prefix = `g${++prefixes}`;
      const running = await instance(prefix);
      const client = new Redis(redis.url);
      await client.flushall();
      const newcomer = await instance(prefix);
      const own = newcomer.secret;
      newcomer.signed();
      await running.check();
      await newcomer.check();
      expect(newcomer.secret).toBe(own);
      expect(newcomer.refusal?.code).toBe('state_store_conflict');
      expect(running.refusal).toBeUndefined();
      expect(await client.get(`${prefix}:signing_secret`)).toBe(running.secret);
      client.disconnect();
    });

    it('an instance that found the secret in the store never gives it up, even having signed nothing', async () => {
      const prefix = `g${++prefixes}`;
      const first = await instance(prefix);
      const second = await instance(prefix);
      expect(second.secret).toBe(first.secret);
      const client = new Redis(redis.url);
      // Another group's secret, recorded as drawn long before: the store's wins, but the second cannot adopt.
      await client.set(`${prefix}:signing_secret`, 'another-groups-secret');
      await client.set(`${prefix}:signing_secret_drawn`, '000000000000001 elsewhere');
      await second.check();
      expect(second.secret).toBe(first.secret);
      expect(second.refusal?.code).toBe('state_store_conflict');
      client.disconnect();
    });
  },
);
