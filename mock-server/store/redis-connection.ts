import { Redis } from 'ioredis';
import { GatewayError } from '../errors.ts';
import { displayUrl } from './display-url.ts';

export { displayUrl };

/** How to reach the shared state store (the config's `store:` section). */
export interface RedisConnectionOptions {
  url: string;
  keyPrefix: string;
  /** Every command fails after this long (a hung Redis must not hang requests). */
  timeoutMs: number;
  log: (line: string) => void;
}

/** A connection to Redis for the shared state: its client, key names, and errors mapped to 503. */
export interface RedisConnection {
  readonly redis: Redis;
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
   * The promise, or 503 state_store_unavailable once `timeoutMs` passed: one deadline for everything a
   * request waits for in the store (several commands, a previous write), so a Redis that hangs answers
   * within `store.timeout_ms`, never a multiple of it.
   */
  bounded<T>(work: Promise<T>): Promise<T>;
  /** A second connection for pub/sub (a subscribed connection can run nothing else). */
  subscriber(): Redis;
  close(): Promise<void>;
}

/** The promise, or a rejection once `ms` passed (the timer is cleared as soon as it settles). */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within store.timeout_ms (${ms} ms)`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Connects to Redis and waits until it answers (a clear error at start, rather than 503s from the first
 * request). Afterwards: no offline queue (a command while Redis is away fails at once: 503), a timeout on
 * every command, reconnection on its own every 100 ms to 1 s, and a tick's commands pipelined together.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisConnection> {
  const settings = {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    commandTimeout: options.timeoutMs,
    connectTimeout: Math.max(options.timeoutMs, 1000),
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
  } as const;
  const redis = new Redis(options.url, settings);
  const where = displayUrl(options.url);
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
  const subscribers: Redis[] = [];
  return {
    redis,
    options,
    key: (name) => `${options.keyPrefix}:${name}`,
    unavailable: (error) =>
      error instanceof GatewayError
        ? error
        : new GatewayError('state_store_unavailable', {
            message: `The shared state store did not answer (${reasonOf(error)}): retry with backoff.`,
          }),
    bounded: (work) => withDeadline(work, options.timeoutMs),
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
      for (const sub of subscribers) sub.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
