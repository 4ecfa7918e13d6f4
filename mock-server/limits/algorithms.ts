/**
 * Rate-limit algorithms as small state machines over the gateway clock (milliseconds).
 *
 * Each has `check(now)`, which decides without changing anything, and `consume(now)`, which records an
 * admitted request. The limiter checks every rule first and consumes only when all admit; as nothing
 * awaits in between, a burst of concurrent requests can never slip past a limit.
 *
 * `retryAfterMs` is truthful: if the same caller sends nothing else, a request made `retryAfterMs` later is
 * admitted. `nextMs` is when more quota is made available (the `t` of draft-ietf-httpapi-ratelimit-headers-10,
 * section 4.1.2); on a refusal it is `retryAfterMs` itself, so the RateLimit field and Retry-After agree.
 */
export interface Decision {
  allowed: boolean;
  /** Requests still allowed right now, after this one if it is admitted. */
  remaining: number;
  /** 0 when allowed; otherwise how long until one request would be admitted. */
  retryAfterMs: number;
  /**
   * How long until additional quota is made available (one more request admitted than `remaining` says).
   * Equal to `retryAfterMs` when refused: both come from the one computation.
   */
  nextMs: number;
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
function createTokenBucket(limit: number, windowMs: number): LimitState {
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
        const remaining = Math.floor(after / windowMs);
        // The next whole token: after this one is taken the bucket is below capacity, so it comes.
        return {
          allowed: true,
          remaining,
          retryAfterMs: 0,
          nextMs: Math.ceil(((remaining + 1) * windowMs - after) / limit),
        };
      }
      const retryAfterMs = Math.ceil((windowMs - available) / limit);
      return { allowed: false, remaining: 0, retryAfterMs, nextMs: retryAfterMs };
    },
    consume(at) {
      const now = Math.floor(at);
      units = unitsAt(now) - windowMs;
      last = now;
    },
  };
}

/** Fixed window: at most `limit` requests per aligned window of `windowMs` (windows start at multiples of it). */
function createFixedWindow(limit: number, windowMs: number): LimitState {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  const startOf = (now: number) => Math.floor(now / windowMs) * windowMs;

  return {
    check(now) {
      const start = startOf(now);
      const used = start === windowStart ? count : 0;
      // Quota comes back all at once, at the end of the window.
      const nextMs = start + windowMs - now;
      if (used < limit) return { allowed: true, remaining: limit - used - 1, retryAfterMs: 0, nextMs };
      return { allowed: false, remaining: 0, retryAfterMs: nextMs, nextMs };
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
function createSlidingWindow(limit: number, windowMs: number): LimitState {
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
      // Quota comes back one request at a time, as the oldest admission leaves the window (this one, when
      // the window is empty).
      const oldest = size > 0 ? (times[head] as number) : now;
      const nextMs = oldest + windowMs - now;
      if (size < limit) return { allowed: true, remaining: limit - size - 1, retryAfterMs: 0, nextMs };
      return { allowed: false, remaining: 0, retryAfterMs: nextMs, nextMs };
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
