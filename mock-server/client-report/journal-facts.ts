import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal.ts';

/** A failed attempt: rate-limited, a server error, or a dropped connection. */
export const isFailure = (e: JournalEntry) => e.status === 429 || e.status === 0 || e.status >= 500;

/** When the gateway answered, on the real clock. */
export const answeredAt = (e: JournalEntry) => e.real_ms + e.duration_ms;

/** Milliseconds the Retry-After of an entry asked for (gateway clock), or undefined. */
export function retryAfterDelay(e: JournalEntry): number | undefined {
  if (e.retry_after === undefined) return undefined;
  if (/^\d+$/.test(e.retry_after)) return Number(e.retry_after) * 1000;
  const date = Date.parse(e.retry_after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - e.at);
}

/**
 * The requests a refusal's Retry-After binds: for a 429, those its rate-limit rule counts (the whole
 * agent, one operation, or everyone); for a 5xx (a failure of that request), retries of the same request.
 */
export function scopeOf(
  refusal: JournalEntry,
  rules: readonly RateLimitRule[],
): (e: JournalEntry) => boolean {
  if (refusal.status !== 429) return (e) => e.request_fingerprint === refusal.request_fingerprint;
  const rule = rules.find((r) => r.name === refusal.limit?.rule);
  if (!rule || rule.scope === 'agent_tool') return (e) => e.operation === refusal.operation;
  const counted: readonly string[] = rule.operations ?? ['whoami', 'web.search', 'web.fetch'];
  return (e) => counted.includes(e.operation);
}

/** Short human text for one request, e.g. `#12 POST /v1/web/search -> 429 rate_limited`. */
export const describe = (e: JournalEntry) =>
  `#${e.seq} ${e.method} ${e.path} -> ${e.status === 0 ? 'dropped' : e.status}${e.code ? ` ${e.code}` : ''}`;

/**
 * Retry chains: runs of requests with the same fingerprint where each one follows a failure of the one
 * before. `continueAfter` decides which failures a chain continues after.
 */
export function retryChains(
  entries: readonly JournalEntry[],
  continueAfter: (e: JournalEntry) => boolean,
): JournalEntry[][] {
  const open = new Map<string, JournalEntry[]>();
  const chains: JournalEntry[][] = [];
  for (const e of entries) {
    if (!e.request_fingerprint) continue;
    const chain = open.get(e.request_fingerprint);
    const last = chain?.at(-1);
    if (chain && last && continueAfter(last)) chain.push(e);
    else {
      const fresh = [e];
      chains.push(fresh);
      open.set(e.request_fingerprint, fresh);
    }
  }
  return chains;
}

/** Time from each answer to the next attempt, in real milliseconds. */
export const intervalsOf = (chain: readonly JournalEntry[]) =>
  chain.slice(1).map((e, i) => e.real_ms - answeredAt(chain[i] as JournalEntry));

/**
 * From when requests after a refusal count as reactions to it: `graceMs` after it was answered. The
 * gateway cannot tell a client's concurrent batch (queued on other connections, arriving one after
 * another) from an immediate retry, so anything in the grace window is taken as already in flight.
 */
export const reactionsFrom = (refusal: JournalEntry, graceMs: number) => answeredAt(refusal) + graceMs;

// Requests arriving this close together were sent together, even if each was answered at once.
const TOGETHER_MS = 10;

/** How many of the agent's requests were on the wire together when `f` arrived (in flight, or sent with it). */
export function parallelismAt(entries: readonly JournalEntry[], f: JournalEntry): number {
  return entries.filter(
    (e) => e.real_ms <= f.real_ms && (answeredAt(e) > f.real_ms || f.real_ms - e.real_ms <= TOGETHER_MS),
  ).length;
}

/** When a refusal's Retry-After ends, on the gateway clock; undefined without one. */
export const retryAfterUntil = (e: JournalEntry) => {
  const delay = retryAfterDelay(e);
  return delay === undefined ? undefined : e.at + delay;
};

// Clock jitter between the agent and the gateway, forgiven.
export const TOLERANCE_MS = 10;

/**
 * A retry that waited out the Retry-After its own previous attempt was given. Client libraries (ky,
 * undici's retry agent) track Retry-After per request; such a retry is honouring it, even if it lands in
 * the window another, concurrent request was told about.
 */
export function honoursOwnRetryAfter(entries: readonly JournalEntry[], f: JournalEntry): boolean {
  if (!f.request_fingerprint) return false;
  let previous: JournalEntry | undefined;
  for (const e of entries) {
    if (e.seq >= f.seq) break;
    if (e.request_fingerprint === f.request_fingerprint) previous = e;
  }
  const until = previous ? retryAfterUntil(previous) : undefined;
  return until !== undefined && f.at >= until - TOLERANCE_MS;
}
