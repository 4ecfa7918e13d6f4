import { randomBytes, randomUUID } from 'node:crypto';
import type { GatewayConfig } from '../config/schema.ts';
import { connectRedis, type RedisConnection } from './redis-connection.ts';
import { createRedisFaults, type RedisFaults } from './redis-faults.ts';
import { createRedisIdempotency, type RedisIdempotency } from './redis-idempotency.ts';
import { createRedisJournal, type RedisJournal } from './redis-journal.ts';
import { createRedisLimits, type RedisLimits } from './redis-limits.ts';

/**
 * The state several gateway instances share (docs/architecture.md, "Shared state"): rate limits and
 * concurrency leases, token generations, idempotency keys, the journal, the signing secret, and the admin
 * state (agents, tools, faults, clock, scenario) as a snapshot every instance re-reads when told.
 * In-memory stores stay the default; this one is used when `store.url` is a Redis URL.
 */
export interface SharedStore {
  readonly url: string;
  readonly connection: RedisConnection;
  readonly limits: RedisLimits;
  readonly idempotency: RedisIdempotency;
  readonly journal: RedisJournal;
  readonly faults: RedisFaults;
  /** The signing secret every instance agrees on when the config sets none (generated once, SET NX). */
  readonly signingSecret: string;
  /** This instance's id on the control channel. */
  readonly instanceId: string;
  close(): Promise<void>;
}

/**
 * Connects the shared store for a config: fails (with what to do) when Redis cannot be reached, or when
 * the store already holds the state of a gateway with another config under the same key prefix.
 */
export async function connectSharedStore(
  config: Pick<GatewayConfig, 'store' | 'journal' | 'idempotency'>,
  log: (line: string) => void,
  options: { configFingerprint?: string } = {},
): Promise<SharedStore> {
  const { store } = config;
  const connection = await connectRedis({
    url: store.url,
    keyPrefix: store.key_prefix,
    timeoutMs: store.timeout_ms,
    log,
  });
  try {
    const { redis } = connection;
    if (options.configFingerprint) {
      const key = connection.key('config');
      await redis.set(key, options.configFingerprint, 'NX');
      const held = await redis.get(key);
      if (held !== options.configFingerprint)
        throw new Error(
          `The state store at ${store.url} holds the state of a gateway with another config under the key prefix "${store.key_prefix}". Give every instance the same config, use another store.key_prefix, or clear the old state (redis-cli --scan --pattern '${store.key_prefix}:*' | xargs redis-cli del).`,
        );
    }
    const secretKey = connection.key('signing_secret');
    await redis.set(secretKey, randomBytes(32).toString('base64url'), 'NX');
    const signingSecret = (await redis.get(secretKey)) as string;
    const leaseMs = Math.round(store.lease_seconds * 1000);
    const limits = createRedisLimits(connection, { leaseMs });
    await limits.loadEpoch();
    return {
      url: store.url,
      connection,
      limits,
      idempotency: createRedisIdempotency(connection, {
        ttlSeconds: config.idempotency.ttl_seconds,
        leaseMs,
      }),
      journal: createRedisJournal(
        connection,
        config.journal.capacity,
        await redis.incr(connection.key('instances')),
      ),
      faults: createRedisFaults(connection),
      signingSecret,
      instanceId: randomUUID(),
      async close() {
        limits.stop();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
