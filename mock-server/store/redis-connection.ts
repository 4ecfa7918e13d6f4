import { GatewayError } from '../errors.ts';
import { displayUrl } from './display-url.ts';
import type { RedisClient } from './redis-client.ts';
import { createStoreLiveness, type StoreLiveness } from './store-liveness.ts';

export { displayUrl };

/** How to reach the shared state store (the config's `store:` section). */
export interface RedisConnectionOptions {
  url: string;
  keyPrefix: string;
  /**
   * A store silent this long while commands wait is gone: they fail (503) and the connection is made again
   * (a hung Redis must not hang requests; a slow one that keeps answering is waited for).
   */
  timeoutMs: number;
  log: (line: string) => void;
}

/** A connection to Redis for the shared state: its client, key names, and errors mapped to 503. */
export interface RedisConnection {
  /** The client (ioredis's, behind the package's own type: redis-client.ts). */
  readonly redis: RedisClient;
  readonly options: RedisConnectionOptions;
  /** A key under the configured prefix, e.g. `agw:journal`. */
  key(name: string): string;
  /** The 503 state_store_unavailable a failed Redis call becomes (never a 500, never a fallback). */
  unavailable(error: unknown): GatewayError;
  /**
   * Set while the store disagrees with this instance (another signing secret or config: store-guard.ts):
   * every request that depends on shared state is refused with it (503 state_store_conflict).
   */
  refusal?: GatewayError;
  /**
   * The promise, or 503 state_store_unavailable once `timeoutMs` passed with nothing heard from the store
   * meanwhile: one deadline for everything a request waits for in the store (several commands, a previous
   * write), so a Redis that hangs answers within about `store.timeout_ms`, never a multiple of it, and a
   * Redis that keeps answering (slowly, behind a burst) is waited for.
   */
  bounded<T>(work: Promise<T>): Promise<T>;
  /** A second connection for pub/sub (a subscribed connection can run nothing else). */
  subscriber(): RedisClient;
  close(): Promise<void>;
}

/**
 * The promise, or a rejection once `ms` passed. With `liveness`: only once the store was silent that long
 * (`StoreLiveness.judge`): a store that keeps answering is slow (a burst queued ahead of this work, a busy
 * machine), not gone, and is waited for; a hung one is refused after about `ms`.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, liveness?: StoreLiveness): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const since = liveness?.now() ?? 0;
  const expired = new Promise<never>((_, reject) => {
    const refuse = () => reject(new Error(`no answer within store.timeout_ms (${ms} ms)`));
    const arm = (delay: number) => {
      timer = setTimeout(() => {
        if (!liveness) return refuse();
        liveness.judge(ms, since, (verdict) => {
          if (settled) return;
          if (verdict.silent) refuse();
          else arm(verdict.retryInMs);
        });
      }, delay);
    };
    arm(ms);
  });
  return Promise.race([work, expired]).finally(() => {
    settled = true;
    clearTimeout(timer);
  });
}

/**
 * The same for every command, bounded or not: when commands wait and the store stays silent for `timeoutMs`,
 * the connection is dropped and made again, which fails every waiting command at once (503), instead of a
 * deadline per command that a queue behind a burst passed on a healthy store. Returns the stopper.
 */
function watchLiveness(redis: RedisClient, timeoutMs: number, liveness: StoreLiveness, gone: () => void) {
  let waitingSince: number | undefined;
  let judging = false;
  const check = () => {
    if (redis.commandQueue.length === 0) {
      waitingSince = undefined;
      return;
    }
    // First seen waiting at this check: the wait counts from here at the earliest (never longer than it is).
    waitingSince ??= liveness.now();
    if (judging) return;
    judging = true;
    liveness.judge(timeoutMs, waitingSince, (verdict) => {
      judging = false;
      if (!verdict.silent || redis.commandQueue.length === 0) return;
      waitingSince = undefined;
      gone();
    });
  };
  const timer = setInterval(check, Math.max(10, Math.min(250, Math.round(timeoutMs / 4))));
  timer.unref();
  return () => clearInterval(timer);
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** What a failed command says; commands failed by a dropped connection say so, not ioredis's retry option. */
const lostReason = (error: unknown) =>
  error instanceof Error && error.name === 'MaxRetriesPerRequestError'
    ? 'the connection to it was lost, or it sent nothing for store.timeout_ms while commands waited'
    : reasonOf(error);

/**
 * Connects to Redis and waits until it answers (a clear error at start, rather than 503s from the first
 * request). Afterwards: no offline queue (a command while Redis is away fails at once: 503), a store silent
 * for `timeoutMs` while commands wait counts as gone (`watchLiveness`), reconnection on its own every 100 ms to 1 s, and a tick's commands pipelined together.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisConnection> {
  const settings = {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    // No deadline per command (a burst queued on a healthy store would pass it): `watchLiveness` instead.
    connectTimeout: Math.max(options.timeoutMs, 1000),
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
  } as const;
  // Loaded here, when a Redis store is asked for: a gateway on the memory store never loads ioredis. Node
  // hands its CommonJS exports over by name; the CLI's bundle (esbuild) only as the default export.
  const ioredis = await import('ioredis');
  const Redis = ioredis.Redis ?? (ioredis.default as unknown as { Redis: typeof ioredis.Redis }).Redis;
  const redis: RedisClient = new Redis(options.url, settings);
  const where = displayUrl(options.url);
  const liveness = createStoreLiveness();
  redis.on('connect', () => {
    liveness.heard();
    redis.stream.on('data', liveness.heard);
  });
  let down = false;
  // Reported once per outage (a lost connection or a failed attempt); every request meanwhile gets its 503.
  const lost = (why: string) => {
    if (down || !connected) return;
    down = true;
    options.log(`state store ${where} unavailable: ${why}; reconnecting`);
  };
  let connected = false;
  redis.on('error', (error) => lost(reasonOf(error)));
  redis.on('close', () => lost('connection closed'));
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    options.log(`state store ${where} is back`);
  });
  try {
    await redis.connect();
    connected = true;
  } catch (error) {
    redis.disconnect();
    throw new Error(
      `Cannot reach the state store at ${where}: ${reasonOf(error)}. Start Redis there, or use --store memory (one instance).`,
    );
  }
  const stopWatching = watchLiveness(redis, options.timeoutMs, liveness, () => {
    options.log(
      `state store ${where} sent nothing for ${options.timeoutMs} ms (store.timeout_ms) while commands waited: treating it as gone, reconnecting`,
    );
    redis.disconnect(true);
  });
  const subscribers: RedisClient[] = [];
  return {
    redis,
    options,
    key: (name) => `${options.keyPrefix}:${name}`,
    unavailable: (error) =>
      error instanceof GatewayError
        ? error
        : new GatewayError('state_store_unavailable', {
            message: `The shared state store did not answer (${lostReason(error)}): retry with backoff.`,
          }),
    bounded: (work) => withDeadline(work, options.timeoutMs, liveness),
    subscriber() {
      const sub = redis.duplicate({
        enableOfflineQueue: true,
        enableAutoPipelining: false,
        commandTimeout: undefined,
      });
      sub.on('error', () => {});
      subscribers.push(sub);
      return sub;
    },
    async close() {
      connected = false;
      stopWatching();
      for (const sub of subscribers) sub.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
