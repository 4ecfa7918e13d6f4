import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import type { Credential, SuiteResponse } from '../model/suite-request.ts';
import { exhaustedWaitMs } from './rate-limit-headers.ts';

/* How the suite's client paces itself (spec section 7): which failures it retries, how long it waits. */

/**
 * Whether a status is a server failure the suite retries (spec section 7: "5xx: transient server-side
 * failure; retry with backoff"). Every 5xx, a 500 as much as a 502: the spec does not tell them apart, so a
 * rare 500 that a retry clears is tolerated exactly as a rare 502 is, and a 500 that persists through the
 * retries is observed exactly as a 503 that persists is.
 */
export const isTransient = (status: number) => status >= 500 && status <= 599;

/**
 * Whether a 5xx is load shed the way HTTP says it (RFC 9110 §15.6.4): a 503 that tells the client when to
 * come back (a Retry-After). Shed load like that is allowed in any amount, as long as a retry clears it.
 */
export const isSignalledShedding = (response: SuiteResponse) =>
  response.status === 503 && retryAfterHeaderOf(response) !== undefined;

/** A response's Retry-After, parsed, or undefined without a usable one. */
const retryAfterHeaderOf = (response: SuiteResponse) => {
  const header = response.headers['retry-after'];
  return header === undefined ? undefined : parseRetryAfter(header);
};

/**
 * The wait a response's Retry-After asks for (ms), or undefined without a usable one. `now`: when it
 * arrived, on the suite's clock (an HTTP-date without a Date header is read against it).
 */
export function retryAfterOf(response: SuiteResponse, now: number): number | undefined {
  const parsed = retryAfterHeaderOf(response);
  return parsed ? retryAfterDelayMs(parsed, response.headers.date, now) : undefined;
}

/**
 * The wait a 429 asks for (ms): its Retry-After, else the reset its RateLimit / X-RateLimit-* headers
 * tell; undefined when it says nothing (the client then backs off exponentially). `now`: when it arrived,
 * on the suite's clock.
 */
export function askedWaitOf(response: SuiteResponse, now: number): number | undefined {
  return retryAfterOf(response, now) ?? exhaustedWaitMs(response.status, response.headers, now);
}

/** Pacing scopes: a limit applies to an agent (each real token) or to anonymous traffic (an address). */
export const scopeOf = (credential: Credential) =>
  credential === 'valid' || credential === 'denied' ? credential : 'anonymous';
/**
 * Three, not two: a gateway failing 5% of requests at random would leave one in 8,000 still failing after
 * two retries, enough to fail one run in twenty on the suite's ~400 requests; after three, one in 160,000.
 */
export const MAX_TRANSIENT_RETRIES = 3;
/** Exponential backoff with "equal jitter": half the step fixed, half random, capped (8 s by default). */
export const backoffMs = (attempt: number, random = Math.random, capMs = 8000) => {
  const step = Math.min(capMs, 250 * 2 ** attempt);
  return step / 2 + random() * (step / 2);
};

/**
 * Retries of a 429 that asks for no wait (no Retry-After, no rate-limit reset): the backoff steps double
 * up to --max-wait-seconds (0.5, 1, 2, ... 32, then 60 s at the default), about one to two minutes in all.
 */
export const NO_WAIT_RETRIES = 8;

/** The suite's own floor under a Retry-After once the gateway's proved too short: 1 s, doubling. */
export const FIRST_LIE_FLOOR_MS = 1000;

/**
 * Per scope, the suite's own floor under the waits a 429 asks, once one proved too short (0 until then):
 * 1 s after the first 429 met again by a retry that waited what was asked, alone in its scope (nothing
 * else sent or in flight), doubling each time after, capped at
 * --max-wait-seconds. A gateway whose Retry-After lies is still retried with backoff, never at 0 s.
 */
export function createWaitFloors(capMs: number) {
  const floors = new Map<string, number>();
  const floorOf = (scope: string) => floors.get(scope) ?? 0;
  const counts = new Map<string, { sent: number; inFlight: number }>();
  return {
    floorOf,
    /**
     * A scope's requests sent so far and in flight now. Only a retry that was alone in its scope, from the
     * 429 that asked the wait to its own answer, shows a wait too short: a concurrent sibling may have taken
     * the one slot the wait freed (contention, not a lie).
     */
    traffic(scope: string) {
      let entry = counts.get(scope);
      if (!entry) {
        entry = { sent: 0, inFlight: 0 };
        counts.set(scope, entry);
      }
      return entry;
    },
    raise(scope: string) {
      floors.set(scope, Math.min(Math.max(FIRST_LIE_FLOOR_MS, floorOf(scope) * 2), capMs));
    },
  };
}

/**
 * The wait before retrying a 429 whose Retry-After (or reset) asked `asked` ms, when the gateway's earlier
 * waits proved too short (`floorMs`, 0 while none has): the longer of the two, with up to a quarter of
 * jitter on top, so that a gateway answering "Retry-After: 0" to every 429 is still retried with
 * exponential backoff (DESIGN.md: 0 means now, but a hard cap and backoff always apply).
 */
export const flooredWaitMs = (asked: number, floorMs: number, random = Math.random) =>
  floorMs > asked ? floorMs + random() * (floorMs / 4) : asked;
