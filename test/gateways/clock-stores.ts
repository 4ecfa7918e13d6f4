import type { Options as ExpressRateLimitOptions, Store as ExpressStore } from 'express-rate-limit';
import type { Clock } from '../../mock-server/clock.ts';

/*
 * Rate-limit stores on the gateway's clock, for the gateways written on Express and Fastify: the same
 * counting as the libraries' own memory stores (a fixed window per key, opened by its first hit), read from
 * the clock the gateway runs on instead of Date.now(), so that on a virtual clock the limit refills only
 * while the suite waits. Both libraries take such a store as an ordinary option (`store`).
 */

/** Hits per key in a fixed window opened by the key's first hit (express-rate-limit's MemoryStore, @fastify/rate-limit's LocalStore). */
function windowCounter(clock: Clock) {
  const windows = new Map<string, { start: number; hits: number }>();
  const open = (key: string, windowMs: number) => {
    const window = windows.get(key);
    return window && window.start + windowMs > clock.now() ? window : undefined;
  };
  return {
    /** Counts a hit: the key's hits in its window and the milliseconds until the window ends. */
    hit(key: string, windowMs: number) {
      const window = open(key, windowMs) ?? { start: clock.now(), hits: 0 };
      windows.set(key, window);
      window.hits += 1;
      return { hits: window.hits, msLeft: window.start + windowMs - clock.now() };
    },
    /** The key's hits and the time left in its window, without counting one (0 and 0 when none is open). */
    read(key: string, windowMs: number) {
      const window = open(key, windowMs);
      return window
        ? { hits: window.hits, msLeft: window.start + windowMs - clock.now() }
        : { hits: 0, msLeft: 0 };
    },
    unhit(key: string) {
      const window = windows.get(key);
      if (window && window.hits > 0) window.hits -= 1;
    },
    forget(key: string) {
      windows.delete(key);
    },
  };
}

/**
 * An express-rate-limit store on `clock`. express-rate-limit computes its Retry-After and RateLimit reset
 * from the store's reset instant against Date.now(), so the instant is handed over on the real clock: now
 * plus the window's time left on `clock`.
 */
export function expressStoreOn(clock: Clock): ExpressStore {
  const counter = windowCounter(clock);
  let windowMs = 60_000;
  return {
    init(options: ExpressRateLimitOptions) {
      windowMs = options.windowMs;
    },
    get(key) {
      const { hits, msLeft } = counter.read(key, windowMs);
      return hits === 0 ? undefined : { totalHits: hits, resetTime: new Date(Date.now() + msLeft) };
    },
    increment(key) {
      const { hits, msLeft } = counter.hit(key, windowMs);
      return { totalHits: hits, resetTime: new Date(Date.now() + msLeft) };
    },
    decrement: (key) => counter.unhit(key),
    resetKey: (key) => counter.forget(key),
    localKeys: true,
  };
}

type FastifyStoreCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * A @fastify/rate-limit store class on `clock` (the plugin's `store` option takes a class): its `ttl` is
 * the window's time left on `clock`. Each route gets a store of its own (`child`), as with LocalStore.
 */
export function fastifyStoreOn(clock: Clock) {
  return class ClockStore {
    readonly counter = windowCounter(clock);
    incr(key: string, callback: FastifyStoreCallback, timeWindow: number) {
      const { hits, msLeft } = this.counter.hit(key, timeWindow);
      callback(null, { current: hits, ttl: msLeft });
    }
    read(key: string, callback: FastifyStoreCallback, timeWindow: number) {
      const { hits, msLeft } = this.counter.read(key, timeWindow);
      callback(null, { current: hits, ttl: msLeft });
    }
    child() {
      return new ClockStore();
    }
  };
}
