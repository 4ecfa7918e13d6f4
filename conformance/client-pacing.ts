import { setTimeout as realSleep } from 'node:timers/promises';
import { parseRetryAfter, retryAfterDelayMs } from '../vocabulary/retry-after.ts';
import { exhaustedWaitMs } from './rate-limit-headers.ts';
import type { Credential, SuiteResponse } from './suite-request.ts';

/* How the suite's client paces itself (spec section 7): which failures it retries, how long it waits. */

/** Statuses that say "try again" (bad gateway, unavailable, gateway timeout), unlike a 500 (a bug). */
const TRANSIENT = new Set([502, 503, 504]);
/** Whether a status is a transient server failure (spec section 7: retry with backoff). */
export const isTransient = (status: number) => TRANSIENT.has(status);

/** The wait a response's Retry-After asks for (ms), or undefined without a usable one. */
export function retryAfterOf(response: SuiteResponse, now = Date.now()): number | undefined {
  const header = response.headers['retry-after'];
  const parsed = header === undefined ? undefined : parseRetryAfter(header);
  return parsed ? retryAfterDelayMs(parsed, response.headers.date, now) : undefined;
}

/**
 * The wait a 429 asks for (ms): its Retry-After, else the reset its RateLimit / X-RateLimit-* headers
 * tell; undefined when it says nothing (the client then backs off exponentially).
 */
export function askedWaitOf(response: SuiteResponse, now = Date.now()): number | undefined {
  return retryAfterOf(response, now) ?? exhaustedWaitMs(response.status, response.headers, now);
}

/** The suite's clock: real time by default; tests share a virtual one with the gateway they run. */
export interface SuiteClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: SuiteClock = { now: () => Date.now(), sleep: (ms) => realSleep(ms) };

/** Pacing scopes: a limit applies to an agent (each real token) or to anonymous traffic (an address). */
export const scopeOf = (credential: Credential) =>
  credential === 'valid' || credential === 'denied' ? credential : 'anonymous';
/**
 * Three, not two: a gateway failing 5% of requests at random would leave one in 8,000 still failing after
 * two retries, enough to fail one run in twenty on the suite's ~400 requests; after three, one in 160,000.
 */
export const MAX_TRANSIENT_RETRIES = 3;
/** Exponential backoff with "equal jitter": half the step fixed, half random, capped. */
export const backoffMs = (attempt: number, random = Math.random) => {
  const step = Math.min(8000, 250 * 2 ** attempt);
  return step / 2 + random() * (step / 2);
};
