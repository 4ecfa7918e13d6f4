import { createBoundedMap } from '../bounded-map.ts';
import { GatewayError } from '../errors.ts';

/** Client addresses whose failed attempts are remembered (the oldest are forgotten beyond it). */
const THROTTLED_CLIENTS = 10_000;

/**
 * Guessing API keys at /idp/token, per client address: a token bucket of `perMinute` failed attempts
 * (wrong or unknown API key), refilled continuously. While an address has none left, every token request
 * from it is answered 429 rate_limited with a truthful Retry-After (when the next attempt is allowed), the
 * right key included: a guesser learns nothing more by guessing faster. Agents that send their key right
 * are never counted. Requests without a client address (in-process adapters: msw, fetch) are not limited.
 * Real time, not the gateway clock: a frozen virtual clock must not lock a client out for good.
 *
 * @example
 * const throttle = createTokenThrottle({ perMinute: 30 });
 * throttle.check('203.0.113.9'); // undefined: go ahead
 * throttle.failed('203.0.113.9'); // after 30 of these within a minute, check() returns the 429
 */
export function createTokenThrottle(options: { perMinute: number | null; now?: () => number }) {
  const now = options.now ?? (() => performance.now());
  const clients = createBoundedMap<string, { units: number; at: number }>(THROTTLED_CLIENTS);
  let perMinute = options.perMinute;
  // Units left for an address at `t`, refilled since its last failure.
  const unitsOf = (address: string, t: number) => {
    const bucket = clients.get(address);
    if (!bucket || perMinute === null) return perMinute ?? Number.POSITIVE_INFINITY;
    return Math.min(perMinute, bucket.units + ((t - bucket.at) * perMinute) / 60_000);
  };

  return {
    /** The 429 for an address with no attempts left, or undefined. */
    check(address: string | undefined): GatewayError | undefined {
      if (address === undefined || perMinute === null) return undefined;
      const t = now();
      const units = unitsOf(address, t);
      if (units >= 1) return undefined;
      const seconds = Math.max(1, Math.ceil(((1 - units) * 60_000) / perMinute / 1000));
      return new GatewayError('rate_limited', {
        message: `Too many wrong API keys from this client address (${perMinute} per minute at /idp/token): retry after ${seconds} s.`,
        details: {
          reason: 'api_key_attempts',
          limit: perMinute,
          window_seconds: 60,
          retry_after_seconds: seconds,
        },
        headers: { 'retry-after': String(seconds) },
      });
    },
    /** Counts a failed attempt (a wrong or unknown API key) against the address. */
    failed(address: string | undefined): void {
      if (address === undefined || perMinute === null) return;
      const t = now();
      clients.set(address, { units: Math.max(0, unitsOf(address, t) - 1), at: t });
    },
    configure(next: number | null) {
      perMinute = next;
      clients.clear();
    },
  };
}
