import { randomBytes, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * What every instance sharing a store must hold the same (docs/operators.md, "What survives what"): the
 * signing secret, the config fingerprint, and a marker naming the store's incarnation (written when the
 * store is first used, so an emptied store is told apart from a store that holds our state).
 *
 * One script, atomically: each of the three is written only where the store lost it (SET NX), and what the
 * store holds afterwards is returned. An instance runs it at start, on every reconnect and every
 * `GUARD_INTERVAL_MS`: a restart without persistence, a FLUSHALL, an eviction or a failover to an empty
 * replica is repaired with this instance's values within one interval, before any instance starting after it
 * can have drawn a secret of its own (an instance that finds no secret waits `startGraceMs` for a running
 * one to write it back). Signing and verifying never read the store: every instance keeps the secret it
 * started with, so a token valid before a wipe stays valid after it on every instance.
 * Every instance also keeps a key of its own alive (KEYS[4]), so each instance notices a wipe, not only the
 * first one to repair it.
 * KEYS: marker, secret, config, this instance's key. ARGV: marker, secret, config ('' : none), its ttl ms.
 * Returns {1 if the marker or this instance's key was missing (a wipe, or a start), marker, secret,
 * config or ''}.
 */
export const GUARD_SCRIPT = `
local fresh = redis.call('SET', KEYS[1], ARGV[1], 'NX')
local seen = redis.call('SET', KEYS[4], '1', 'PX', ARGV[4], 'XX')
if not seen then redis.call('SET', KEYS[4], '1', 'PX', ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[2], 'NX')
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'NX') end
local wiped = 0
if fresh or not seen then wiped = 1 end
return {wiped, redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]) or ''}
`;

/** How often a running instance re-asserts its secret, config and marker (and so notices a wipe). */
export const GUARD_INTERVAL_MS = 500;
/** How long a starting instance that finds no secret waits for a running instance to write its own back. */
export const START_GRACE_MS = 3 * GUARD_INTERVAL_MS;

/** What the state store lost when it was emptied, and what the instances write back. */
export const WIPE_LOST =
  'lost: the journal, rate-limit counts, concurrency leases and idempotency keys; written back from this instance: the signing secret, the config fingerprint, the admin state (agents, token revocations, tools, faults, clock, scenario)';

const CONFIGURED = 'configured';

export interface StoreGuardOptions {
  /** The config's fingerprint (undefined: not compared). */
  configFingerprint?: string;
  /** The configured signing secret, if any: then the store's is never used for tokens, only compared. */
  configuredSecret?: string;
  intervalMs?: number;
  startGraceMs?: number;
}

/**
 * Holds this instance's view of the store's identity and keeps it true: see GUARD_SCRIPT. When the store
 * holds another secret or config than this instance (two groups of instances that started apart, during a
 * partition), this instance refuses every request that depends on shared state with 503
 * `state_store_conflict`, loudly, rather than letting tokens flip between valid and invalid per instance.
 */
export async function startStoreGuard(connection: RedisConnection, options: StoreGuardOptions) {
  const { redis } = connection;
  const log = connection.options.log;
  const keys = [
    connection.key('marker'),
    connection.key('signing_secret'),
    connection.key('config'),
    connection.key(`instance:${randomUUID()}`),
  ] as const;
  redis.defineCommand('agwGuard', { numberOfKeys: 4, lua: GUARD_SCRIPT });
  const call = redis as unknown as { agwGuard(...args: string[]): Promise<[number, string, string, string]> };
  const intervalMs = options.intervalMs ?? GUARD_INTERVAL_MS;
  const startGraceMs = options.startGraceMs ?? START_GRACE_MS;
  const fingerprint = options.configFingerprint ?? '';
  // This instance's key outlives a stalled event loop by far; it only goes when the store is emptied.
  const instanceTtl = String(Math.max(60_000, intervalMs * 100));

  // A starting instance takes the secret the store holds. None there: the first start, or a wipe that the
  // running instances will repair within one interval; wait for them before drawing a new secret.
  // With a configured secret the store's is never used: a placeholder keeps the comparison meaningful
  // (the config fingerprint already says whether every instance has the same configured secret).
  const configured = options.configuredSecret !== undefined;
  let held = configured ? CONFIGURED : await redis.get(keys[1]);
  if (held === null) {
    const until = Date.now() + startGraceMs;
    while (held === null && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, intervalMs)));
      held = await redis.get(keys[1]);
    }
  }
  const [, marker, secret, config] = await call.agwGuard(
    ...keys,
    (await redis.get(keys[0])) ?? randomUUID(),
    held ?? randomBytes(32).toString('base64url'),
    fingerprint,
    instanceTtl,
  );
  if (fingerprint && config !== fingerprint)
    throw new Error(
      `The state store at ${connection.options.url} holds the state of a gateway with another config under the key prefix "${connection.options.keyPrefix}". Give every instance the same config, use another store.key_prefix, or clear the old state (redis-cli --scan --pattern '${connection.options.keyPrefix}:*' | xargs redis-cli del).`,
    );

  let heldMarker = marker;
  const wipeListeners: (() => void)[] = [];
  let checking = false;

  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      const [wiped, nowMarker, nowSecret, nowConfig] = await call.agwGuard(
        ...keys,
        heldMarker,
        secret,
        fingerprint,
        instanceTtl,
      );
      if (wiped === 1 || nowMarker !== heldMarker) {
        heldMarker = nowMarker;
        log(
          `state store ${connection.options.url} was emptied (restart without persistence, FLUSHALL, eviction or failover); ${WIPE_LOST}`,
        );
        for (const listener of wipeListeners) listener();
      }
      const why =
        nowSecret !== secret
          ? 'another signing secret'
          : fingerprint && nowConfig !== fingerprint
            ? 'another config'
            : undefined;
      if (why && !connection.refusal) {
        connection.refusal = new GatewayError('state_store_conflict', {
          message: `The shared state store holds ${why} than this instance (instances started apart while the store was emptied or unreachable): this instance refuses rather than let tokens and limits differ between instances. Restart this instance.`,
        });
        log(
          `state store ${connection.options.url} holds ${why} than this instance: answering 503 state_store_conflict until they agree again (restart this instance to take the store's)`,
        );
      } else if (!why && connection.refusal) {
        connection.refusal = undefined;
        log(`state store ${connection.options.url} agrees with this instance again`);
      }
    } catch {
      // The store is away: the connection reports it, and requests get 503 state_store_unavailable.
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  const onReady = () => void check();
  redis.on('ready', onReady);

  return {
    /** The signing secret every instance shares (the store's, as found or written at start). */
    secret,
    /** Set while the store disagrees with this instance: the 503 every shared-state request gets. */
    get refusal() {
      return connection.refusal;
    },
    /** Called once per wipe noticed by this instance, after the secret, config and marker are back. */
    onWipe(listener: () => void) {
      wipeListeners.push(listener);
    },
    /** Runs the check now (tests; it runs every interval and on every reconnect on its own). */
    check,
    stop() {
      clearInterval(timer);
      redis.off('ready', onReady);
      redis.del(keys[3]).catch(() => {});
    },
  };
}

export type StoreGuard = Awaited<ReturnType<typeof startStoreGuard>>;
