/**
 * Rate-limit algorithms as small state machines over the gateway clock (milliseconds).
 *
 * Each has `check(now)`, which decides without changing anything, and `consume(now)`, which records an
 * admitted request. The limiter checks every rule first and consumes only when all admit; as nothing
 * awaits in between, a burst of concurrent requests can never slip past a limit.
 *
 * `retryAfterMs` is truthful: if the same caller sends nothing else, a request made `retryAfterMs` later is
 * admitted. `resetMs` is when the full quota is available again (for RateLimit headers).
 */
export interface Decision {
  allowed: boolean;
  /** Requests still allowed right now, after this one if it is admitted. */
  remaining: number;
  /** 0 when allowed; otherwise how long until one request would be admitted. */
  retryAfterMs: number;
  /** How long until the whole quota is available again. */
  resetMs: number;
}

export interface LimitState {
  check(now: number): Decision;
  consume(now: number): void;
}

export type Algorithm = 'token_bucket' | 'fixed_window' | 'sliding_window';

/**
 * Token bucket with capacity `limit`, refilled at `limit` tokens per `windowMs`, in exact integer
 * arithmetic: a token is `windowMs` units and the bucket gains `limit` units per millisecond, so no
 * rounding can make a truthful Retry-After fall short (floats did, at real epoch timestamps).
 * `limit * windowMs` must stay below 2^53 (the config schema checks it).
 */
export function createTokenBucket(limit: number, windowMs: number): LimitState {
  const capacity = limit * windowMs;
  let units = capacity;
  let last: number | undefined;

  // Units available at `now`; an idle window or more refills the bucket (and bounds the multiplication).
  // A clock set back (virtual time) moves the last refill back with it: the bucket keeps its units and
  // refills from now on, so Retry-After stays truthful (it would otherwise wait for the old time again).
  const unitsAt = (now: number) => {
    if (last === undefined) return capacity;
    if (now < last) last = now;
    const elapsed = Math.min(Math.max(0, now - last), windowMs);
    return Math.min(capacity, units + elapsed * limit);
  };

  return {
    check(at) {
      const now = Math.floor(at);
      const available = unitsAt(now);
      if (available >= windowMs) {
        const after = available - windowMs;
        return {
          allowed: true,
          remaining: Math.floor(after / windowMs),
          retryAfterMs: 0,
          resetMs: Math.ceil((capacity - after) / limit),
        };
      }
      return {
        allowed: false,
        remaining: 0,
        retryAfterMs: Math.ceil((windowMs - available) / limit),
        resetMs: Math.ceil((capacity - available) / limit),
      };
    },
    consume(at) {
      const now = Math.floor(at);
      units = unitsAt(now) - windowMs;
      last = now;
    },
  };
}

/** Fixed window: at most `limit` requests per aligned window of `windowMs` (windows start at multiples of it). */
export function createFixedWindow(limit: number, windowMs: number): LimitState {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  const startOf = (now: number) => Math.floor(now / windowMs) * windowMs;

  return {
    check(now) {
      const start = startOf(now);
      const used = start === windowStart ? count : 0;
      const resetMs = start + windowMs - now;
      if (used < limit) return { allowed: true, remaining: limit - used - 1, retryAfterMs: 0, resetMs };
      return { allowed: false, remaining: 0, retryAfterMs: resetMs, resetMs };
    },
    consume(now) {
      const start = startOf(now);
      if (start !== windowStart) {
        windowStart = start;
        count = 0;
      }
      count += 1;
    },
  };
}

/**
 * Sliding window log: at most `limit` requests in any interval of `windowMs`. Exact (it keeps the times of
 * admitted requests, at most `limit` of them), so the schema caps `limit` for this algorithm.
 */
export function createSlidingWindow(limit: number, windowMs: number): LimitState {
  // A ring of admission times; `times[head]` is the oldest once the ring is full.
  const times = new Float64Array(limit);
  let head = 0;
  let size = 0;

  const expire = (now: number) => {
    while (size > 0 && (times[head] as number) <= now - windowMs) {
      head = (head + 1) % limit;
      size -= 1;
    }
  };

  return {
    check(now) {
      expire(now);
      const newest = size > 0 ? (times[(head + size - 1) % limit] as number) : now;
      if (size < limit) {
        return {
          allowed: true,
          remaining: limit - size - 1,
          retryAfterMs: 0,
          resetMs: Math.max(newest, now) + windowMs - now,
        };
      }
      const oldest = times[head] as number;
      return {
        allowed: false,
        remaining: 0,
        retryAfterMs: oldest + windowMs - now,
        resetMs: newest + windowMs - now,
      };
    },
    consume(now) {
      expire(now);
      if (size === limit) {
        head = (head + 1) % limit;
        size -= 1;
      }
      times[(head + size) % limit] = now;
      size += 1;
    },
  };
}

/** Builds the state machine for one rule key. */
export function createLimitState(algorithm: Algorithm, limit: number, windowMs: number): LimitState {
  switch (algorithm) {
    case 'token_bucket':
      return createTokenBucket(limit, windowMs);
    case 'fixed_window':
      return createFixedWindow(limit, windowMs);
    case 'sliding_window':
      return createSlidingWindow(limit, windowMs);
  }
}
