/**
 * What a response's rate-limit headers say about when the next request will be admitted, beyond
 * Retry-After: the IETF RateLimit fields (draft 6: `RateLimit-Remaining` + `RateLimit-Reset`; draft 7:
 * `RateLimit: limit=20, remaining=0, reset=10`; draft 8 and later: `RateLimit: "policy";r=0;t=10`) and
 * the common `X-RateLimit-Remaining` + `X-RateLimit-Reset` (delta seconds, or epoch seconds or ms) or
 * `X-RateLimit-Reset-After`. Only a remaining count of 0 (or a 429) makes a reset a wait.
 */

interface RateLimitHint {
  /** Requests left in the window, when the headers say. */
  remaining?: number;
  /** Milliseconds until the window resets, when the headers say. */
  resetMs?: number;
}

const num = (value: string | undefined) => {
  if (value === undefined) return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** A reset value: delta seconds, or (when it reads as one) an epoch time in seconds or milliseconds. */
function resetToMs(value: number, now: number): number {
  if (value > 1e12) return Math.max(0, value - now);
  if (value > 1e9) return Math.max(0, value * 1000 - now);
  return value * 1000;
}

/** The tightest (least remaining, then latest reset) of the policies a `RateLimit` field lists. */
function parseRateLimitField(value: string): RateLimitHint {
  let best: RateLimitHint = {};
  // Draft 8+: items `"name";r=0;t=10`, comma-separated. Draft 7: one item `limit=.., remaining=.., reset=..`.
  if (/(^|[;,\s])r=\d/.test(value)) {
    for (const item of value.split(',')) {
      const r = num(/;\s*r=(\d+)/.exec(item)?.[1]);
      const t = num(/;\s*t=(\d+)/.exec(item)?.[1]);
      if (r === undefined) continue;
      if (
        best.remaining === undefined ||
        r < best.remaining ||
        (r === best.remaining && (t ?? 0) > (best.resetMs ?? 0) / 1000)
      )
        best = { remaining: r, ...(t !== undefined && { resetMs: t * 1000 }) };
    }
    return best;
  }
  const remaining = num(/remaining=(\d+)/i.exec(value)?.[1]);
  const reset = num(/reset=(\d+)/i.exec(value)?.[1]);
  return {
    ...(remaining !== undefined && { remaining }),
    ...(reset !== undefined && { resetMs: reset * 1000 }),
  };
}

/** The rate-limit state the headers tell (lower-cased names, as node:http gives them). */
export function rateLimitHint(headers: Record<string, string>, now = Date.now()): RateLimitHint {
  const field = headers.ratelimit;
  if (field) {
    const hint = parseRateLimitField(field);
    if (hint.remaining !== undefined) return hint;
  }
  for (const prefix of ['ratelimit-', 'x-ratelimit-']) {
    const remaining = num(headers[`${prefix}remaining`]?.split(',')[0]);
    const after = num(headers[`${prefix}reset-after`]);
    const reset = num(headers[`${prefix}reset`]?.split(',')[0]);
    if (remaining === undefined && reset === undefined && after === undefined) continue;
    const resetMs =
      after !== undefined ? after * 1000 : reset !== undefined ? resetToMs(reset, now) : undefined;
    return { ...(remaining !== undefined && { remaining }), ...(resetMs !== undefined && { resetMs }) };
  }
  return {};
}

/**
 * The wait (ms) the headers ask before the next request: the reset, when no request is left (or when
 * the response is a 429 and says when the window resets). Undefined when they ask for none.
 */
export function exhaustedWaitMs(
  status: number,
  headers: Record<string, string>,
  now = Date.now(),
): number | undefined {
  const hint = rateLimitHint(headers, now);
  if (hint.resetMs === undefined) return undefined;
  if (status === 429 || hint.remaining === 0) return hint.resetMs;
  return undefined;
}
