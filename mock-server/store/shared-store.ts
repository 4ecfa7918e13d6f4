import { randomUUID } from 'node:crypto';
import type { GatewayConfig } from '../config/schema.ts';
import { connectRedis, type RedisConnection } from './redis-connection.ts';
import { createRedisFaults, type RedisFaults } from './redis-faults.ts';
import { createRedisIdempotency, type RedisIdempotency } from './redis-idempotency.ts';
import { createRedisJournal, type RedisJournal } from './redis-journal.ts';
import { createExchangeSeal } from './redis-journal-exchange.ts';
import { createRedisLimits, type RedisLimits } from './redis-limits.ts';
import { type StoreGuard, type StoreGuardOptions, startStoreGuard } from './store-guard.ts';

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
  /**
   * The signing secret every instance agrees on when the config sets none: the store's when this instance
   * started (or drawn by it into an empty store); kept for the instance's life and written back after a wipe,
   * except that an instance that drew its own and signed nothing with it adopts an older one it finds in
   * the store later (`guard.onSecret`).
   */
  readonly signingSecret: string;
  /** Keeps the secret, config and marker in the store; refuses (503) while the store disagrees. */
  readonly guard: StoreGuard;
  /** This instance's id on the control channel. */
  readonly instanceId: string;
  close(): Promise<void>;
}

/**
 * Connects the shared store for a config: fails (with what to do) when Redis cannot be reached, or when
 * the store already holds the state of a gateway with another config under the same key prefix.
 */
export async function connectSharedStore(
  config: Pick<GatewayConfig, 'store' | 'journal' | 'idempotency'> & {
    identity?: Pick<GatewayConfig['identity'], 'signing_secret'>;
  },
  log: (line: string) => void,
  options: {
    configFingerprint?: string;
    guard?: Pick<StoreGuardOptions, 'intervalMs' | 'startGraceMs'>;
  } = {},
): Promise<SharedStore> {
  const { store } = config;
  const guardOptions = {
    configFingerprint: options.configFingerprint,
    configuredSecret: config.identity?.signing_secret,
    ...options.guard,
  };
  const connection = await connectRedis({
    url: store.url,
    keyPrefix: store.key_prefix,
    timeoutMs: store.timeout_ms,
    log,
  });
  try {
    const { redis } = connection;
    // The secret, config fingerprint and store marker: agreed at start, re-asserted while running.
    const guard = await startStoreGuard(connection, guardOptions);
    const leaseMs = Math.round(store.lease_seconds * 1000);
    const limits = createRedisLimits(connection, { leaseMs });
    await limits.loadEpoch();
    const journal = createRedisJournal(
      connection,
      config.journal.capacity,
      await redis.incr(connection.key('instances')),
      // The secret every instance signs with (the guard holds a placeholder for a configured one).
      createExchangeSeal(() => config.identity?.signing_secret ?? guard.secret),
    );
    // A request's leases go back with its tick's journal entries: one script call per tick for both.
    limits.sendReleasesWith(journal.release, journal.sendReleases);
    return {
      url: store.url,
      connection,
      limits,
      idempotency: createRedisIdempotency(connection, {
        ttlSeconds: config.idempotency.ttl_seconds,
        leaseMs,
      }),
      journal,
      faults: createRedisFaults(connection),
      get signingSecret() {
        return guard.secret;
      },
      guard,
      instanceId: randomUUID(),
      async close() {
        limits.stop();
        guard.stop();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
