import { randomBytes, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import { displayUrl } from './display-url.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * What every instance sharing a store must hold the same (docs/operators.md, "What survives what"): the
 * signing secret, the config fingerprint, and a marker naming the store's incarnation (written when the
 * store is first used, so an emptied store is told apart from a store that holds our state).
 *
 * One script, atomically: the marker and config are written only where the store lost them (SET NX); the
 * secret is written where the store lost it, or where the store holds one drawn later than this
 * instance's (KEYS[5] records who drew the store's secret and when): the oldest secret wins, so a newcomer
 * that drew its own after a wipe, because the running instances were stalled past its start grace, never
 * pushes its secret onto them. What the store holds afterwards is returned. An instance runs it at start,
 * on every reconnect and every `GUARD_INTERVAL_MS`: a restart without persistence, a FLUSHALL, an eviction
 * or a failover to an empty replica is repaired with this instance's values within one interval (an
 * instance that finds no secret at start waits `startGraceMs` for a running one to write it back).
 * An instance that drew its own secret at start and has signed nothing with it (no token minted or
 * accepted) adopts an older secret it then finds in the store; otherwise signing and verifying never
 * change secret: a token valid before a wipe stays valid after it on every instance.
 * Every instance also keeps a key of its own alive (KEYS[4]), so each instance notices a wipe, not only the
 * first one to repair it.
 * A secret drawn at this start (ARGV[6] '1') is stamped with the store's own clock when the script runs,
 * not the instance's clock when it drew: of instances started together on an empty store, the first to
 * write wins and the others adopt its secret before they sign anything (stamped by their own clocks, the
 * one that drew first but wrote last replaced a secret another had already signed a token with).
 * KEYS: marker, secret, config, this instance's key, who drew the secret. ARGV: marker, secret, config
 * ('' : none), its ttl ms, who drew this instance's secret (`drawnRecord`), '1' when drawn at this start.
 * Returns {1 if the marker or this instance's key was missing (a wipe, or a start), marker, secret,
 * config or '', who drew the secret or ''}.
 */
export const GUARD_SCRIPT = `
local fresh = redis.call('SET', KEYS[1], ARGV[1], 'NX')
local seen = redis.call('SET', KEYS[4], '1', 'PX', ARGV[4], 'XX')
if not seen then redis.call('SET', KEYS[4], '1', 'PX', ARGV[4]) end
local held = redis.call('GET', KEYS[2])
local drawn = redis.call('GET', KEYS[5])
if ARGV[6] == '1' then
  local now = redis.call('TIME')
  local by = string.match(ARGV[5], ' (.*)$') or ''
  ARGV[5] = string.format('%015.0f', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)) .. ' ' .. by
end
if not held or (held ~= ARGV[2] and drawn and ARGV[5] < drawn) then
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SET', KEYS[5], ARGV[5])
elseif held == ARGV[2] and not drawn then
  redis.call('SET', KEYS[5], ARGV[5])
end
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'NX') end
local wiped = 0
if fresh or not seen then wiped = 1 end
return {wiped, redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]) or '', redis.call('GET', KEYS[5]) or ''}
`;

/** When a drawn record says the secret was drawn, for logs. */
function drawnAt(record: string): string {
  const at = new Date(Number(record.slice(0, 15)));
  return Number.isNaN(at.getTime()) ? 'at an unknown time' : `at ${at.toISOString()}`;
}

/**
 * Who drew a secret and when, as the store keeps it next to the secret: the time first (zero-padded, so
 * an older draw sorts first as text), then the instance that drew it.
 */
export function drawnRecord(atMs: number, by: string): string {
  return `${String(Math.max(0, Math.floor(atMs))).padStart(15, '0')} ${by}`;
}

/** How often a running instance re-asserts its secret, config and marker (and so notices a wipe). */
export const GUARD_INTERVAL_MS = 500;
/** How long a starting instance that finds no secret waits for a running instance to write its own back. */
export const START_GRACE_MS = 3 * GUARD_INTERVAL_MS;

/** What the state store lost when it was emptied, and what the instances write back. */
export const WIPE_LOST =
  "lost: the journal, rate-limit counts, concurrency leases and idempotency keys; written back from this instance: the signing secret, the config fingerprint; merged back from every instance's copy, the newest value of each winning: the admin state (agents, token revocations, tools, faults, clock, scenario)";

const CONFIGURED = 'configured';

export interface StoreGuardOptions {
  /** The config's fingerprint (undefined: not compared). */
  configFingerprint?: string;
  /** The configured signing secret, if any: then the store's is never used for tokens, only compared. */
  configuredSecret?: string;
  intervalMs?: number;
  startGraceMs?: number;
}

/** The guard's keys: marker, secret, config, this instance's key, who drew the secret (GUARD_SCRIPT's order). */
type GuardKeys = readonly [string, string, string, string, string];

/**
 * The secret a starting instance takes: the store's. None there: the first start, or a wipe that the
 * running instances will repair within one interval; wait `startGraceMs` for them before drawing a new one
 * (should they be stalled longer, this instance gives way later: see the guard's check). Null: none found.
 */
async function secretAtStart(
  connection: RedisConnection,
  key: string,
  startGraceMs: number,
  intervalMs: number,
): Promise<string | null> {
  let held = await connection.redis.get(key);
  const until = Date.now() + startGraceMs;
  while (held === null && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, intervalMs)));
    held = await connection.redis.get(key);
  }
  return held;
}

/**
 * Sets or lifts the connection's refusal to match why the store disagrees with this instance (another
 * secret, another config; undefined: it agrees), with one log line per change.
 */
function holdRefusal(
  connection: RedisConnection,
  where: string,
  why: string | undefined,
  log: (line: string) => void,
): void {
  if (why && !connection.refusal) {
    connection.refusal = new GatewayError('state_store_conflict', {
      message: `The shared state store holds ${why} than this instance (instances started apart while the store was emptied or unreachable, and this one has signed tokens with its own): this instance refuses rather than let tokens and limits differ between instances. Restart this instance.`,
    });
    log(
      `state store ${where} holds ${why} than this instance: answering 503 state_store_conflict until they agree again (restart this instance to take the store's)`,
    );
  } else if (!why && connection.refusal) {
    connection.refusal = undefined;
    log(`state store ${where} agrees with this instance again`);
  }
}

/** What one run of GUARD_SCRIPT returned: {wiped, marker, secret, config, who drew the secret}. */
type GuardReading = [number, string, string, string, string];

/**
 * Holds this instance's view of the store's identity and keeps it true: see GUARD_SCRIPT. When the store
 * holds another secret or config than this instance (two groups of instances that started apart, during a
 * partition), this instance refuses every request that depends on shared state with 503
 * `state_store_conflict`, loudly, rather than letting tokens flip between valid and invalid per instance.
 */
export async function startStoreGuard(connection: RedisConnection, options: StoreGuardOptions) {
  const { redis } = connection;
  const log = connection.options.log;
  const where = displayUrl(connection.options.url);
  const instance = randomUUID();
  const keys: GuardKeys = [
    connection.key('marker'),
    connection.key('signing_secret'),
    connection.key('config'),
    connection.key(`instance:${instance}`),
    connection.key('signing_secret_drawn'),
  ];
  redis.defineCommand('agwGuard', { numberOfKeys: 5, lua: GUARD_SCRIPT });
  const call = redis as unknown as { agwGuard(...args: string[]): Promise<GuardReading> };
  const intervalMs = options.intervalMs ?? GUARD_INTERVAL_MS;
  const startGraceMs = options.startGraceMs ?? START_GRACE_MS;
  const fingerprint = options.configFingerprint ?? '';
  // This instance's key outlives a stalled event loop by far; it only goes when the store is emptied.
  const instanceTtl = String(Math.max(60_000, intervalMs * 100));
  const guard = (marker: string, secret: string, drawn: string, drawnNow = false) =>
    call.agwGuard(...keys, marker, secret, fingerprint, instanceTtl, drawn, drawnNow ? '1' : '0');

  // With a configured secret the store's is never used: a placeholder keeps the comparison meaningful
  // (the config fingerprint already says whether every instance has the same configured secret).
  const configured = options.configuredSecret !== undefined;
  const held = configured ? CONFIGURED : await secretAtStart(connection, keys[1], startGraceMs, intervalMs);
  const drawnSecret = held ?? randomBytes(32).toString('base64url');
  const [, marker, storeSecret, config, storeDrawn] = await guard(
    (await redis.get(keys[0])) ?? randomUUID(),
    drawnSecret,
    // Configured: every instance holds the same placeholder, nothing to order.
    configured ? drawnRecord(0, CONFIGURED) : drawnRecord(Date.now(), instance),
    !configured && held === null,
  );
  if (fingerprint && config !== fingerprint)
    throw new Error(
      `The state store at ${where} holds the state of a gateway with another config under the key prefix "${connection.options.keyPrefix}". Give every instance the same config, use another store.key_prefix, or clear the old state (redis-cli --scan --pattern '${connection.options.keyPrefix}:*' | xargs redis-cli del).`,
    );
  /** The secret this instance signs and verifies with, and who drew it when (written back after a wipe). */
  let secret = storeSecret;
  let drawn = storeDrawn;
  // Drawn by this instance at this start (not found in the store): it may still give way to an older one.
  let ownSecret = !configured && held === null && storeSecret === drawnSecret;
  // Whether a token was minted, or accepted, with this secret here: then giving it up would break tokens.
  let signed = false;
  const secretListeners: ((secret: string) => void)[] = [];
  if (ownSecret)
    log(
      `state store ${where} held no signing secret (a first start, or a wipe the running instances have not repaired within ${startGraceMs} ms): this instance drew one; it adopts an older one found later as long as it has signed nothing with its own`,
    );

  let heldMarker = marker;
  const wipeListeners: (() => void)[] = [];
  let checking = false;

  /** One reading of the store: a wipe noticed, an older secret adopted, a disagreement refused. */
  const settle = ([wiped, nowMarker, nowSecret, nowConfig, nowDrawn]: GuardReading) => {
    if (wiped === 1 || nowMarker !== heldMarker) {
      heldMarker = nowMarker;
      log(
        `state store ${where} was emptied (restart without persistence, FLUSHALL, eviction or failover); ${WIPE_LOST}`,
      );
      for (const listener of wipeListeners) listener();
    }
    // The store holds an older secret than the one this instance drew at start (the running instances
    // were stalled past its grace): nothing was signed with ours, so taking theirs breaks no token.
    if (nowSecret !== secret && ownSecret && !signed) {
      secret = nowSecret;
      drawn = nowDrawn;
      ownSecret = false;
      log(
        `state store ${where} holds the signing secret of instances running before this one (drawn ${drawnAt(nowDrawn)}); this instance had signed nothing with its own and adopted theirs`,
      );
      for (const listener of secretListeners) listener(secret);
    }
    const why =
      nowSecret !== secret
        ? 'another signing secret'
        : fingerprint && nowConfig !== fingerprint
          ? 'another config'
          : undefined;
    holdRefusal(connection, where, why, log);
  };
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      settle(await guard(heldMarker, secret, drawn));
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
    /**
     * The signing secret every instance shares: the store's as found or written at start, or, for an
     * instance that drew its own and signed nothing with it, the older one it adopted later (`onSecret`).
     */
    get secret() {
      return secret;
    },
    /** Called when this instance adopts the store's (older) secret in place of the one it drew. */
    onSecret(listener: (secret: string) => void) {
      secretListeners.push(listener);
    },
    /** Tells the guard a token was minted or accepted with the secret: from then on it is never given up. */
    signed() {
      signed = true;
    },
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
