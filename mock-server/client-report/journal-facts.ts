import { parseRetryAfter, retryAfterDelayMs } from '../../conformance/retry-after.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal.ts';

/** A failed attempt: rate-limited, a server error, or a dropped connection. */
export const isFailure = (e: JournalEntry) => e.status === 429 || e.status === 0 || e.status >= 500;

/** When the answer was written to the client, on the real clock (when it was built, for hand-written entries). */
export const answeredAt = (e: JournalEntry) => e.written_ms ?? e.real_ms + e.duration_ms;

/** Milliseconds the Retry-After of an entry asked for (gateway clock), or undefined. */
export function retryAfterDelay(e: JournalEntry): number | undefined {
  const parsed = e.retry_after === undefined ? undefined : parseRetryAfter(e.retry_after);
  // An HTTP-date is on the gateway clock, which is what `at` records.
  return parsed && retryAfterDelayMs(parsed, undefined, e.at);
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

/** When a refusal's Retry-After ends, on the gateway clock; undefined without one. */
export const retryAfterUntil = (e: JournalEntry) => {
  const delay = retryAfterDelay(e);
  return delay === undefined ? undefined : e.at + delay;
};

// Clock jitter between the agent and the gateway, forgiven.
export const TOLERANCE_MS = 10;

/*
 * The journal holds a thousand entries or more, and the report is asked for while an agent is hammering
 * the gateway (the report blocks the event loop while it is made). So the facts below are computed for
 * the whole journal at once, in one pass or by sorting, and a rule looks again, per refusal, only at the
 * requests of that refusal's window: never at the whole journal again for each entry.
 */

/**
 * The first of `length` positions where `holds` is true, for a `holds` that is false up to some position
 * and true from there on (a binary search); `length` if none.
 */
export function firstWhere(length: number, holds: (position: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * The retries that waited out the Retry-After their own previous attempt was given. Client libraries (ky,
 * undici's retry agent) track Retry-After per request; such a retry is honouring it, even if it lands in
 * the window another, concurrent request was told about. An attempt's previous one is the last entry
 * with its fingerprint ahead of the first entry whose seq is not below its own: just ahead of it, when
 * the entries are oldest first as the report passes them.
 */
export function honouringOwnRetryAfter(entries: readonly JournalEntry[]): Set<JournalEntry> {
  const highestSeq: number[] = [];
  for (const e of entries) highestSeq.push(Math.max(e.seq, highestSeq.at(-1) ?? -Infinity));
  // The attempts to judge once the entries ahead of each position are known.
  const judgedAt = new Map<number, JournalEntry[]>();
  for (const f of entries) {
    if (!f.request_fingerprint) continue;
    const place = firstWhere(entries.length, (k) => (highestSeq[k] as number) >= f.seq);
    const judged = judgedAt.get(place);
    if (judged) judged.push(f);
    else judgedAt.set(place, [f]);
  }
  const honouring = new Set<JournalEntry>();
  const previous = new Map<string, JournalEntry>();
  entries.forEach((e, k) => {
    for (const f of judgedAt.get(k) ?? []) {
      const before = previous.get(f.request_fingerprint as string);
      const until = before ? retryAfterUntil(before) : undefined;
      if (until !== undefined && f.at >= until - TOLERANCE_MS) honouring.add(f);
    }
    if (e.request_fingerprint) previous.set(e.request_fingerprint, e);
  });
  return honouring;
}

/**
 * The entries that started before a time, after a position: `startedBefore(after, bound, visit)` visits,
 * in list order, the positions after `after` of the entries whose gateway time `at` is below `bound`. The
 * gateway clock can stand still or jump, so `at` is not in list order: a tree of the earliest `at` over
 * ranges of positions finds them without looking at the others.
 */
export function entriesByGatewayTime(entries: readonly JournalEntry[]) {
  let leaves = 1;
  while (leaves < entries.length) leaves *= 2;
  // Node 1 is the root, node n has children 2n and 2n + 1, leaves start at `leaves`; padding never matches.
  const earliest = new Float64Array(2 * leaves).fill(Number.POSITIVE_INFINITY);
  entries.forEach((e, k) => {
    earliest[leaves + k] = Number.isNaN(e.at) ? Number.POSITIVE_INFINITY : e.at;
  });
  for (let node = leaves - 1; node > 0; node--)
    earliest[node] = Math.min(earliest[2 * node] as number, earliest[2 * node + 1] as number);
  return function startedBefore(after: number, bound: number, visit: (position: number) => void): void {
    const descend = (node: number, low: number, high: number) => {
      if (high <= after + 1 || !((earliest[node] as number) < bound)) return;
      if (node >= leaves) visit(low);
      else {
        const middle = (low + high) / 2;
        descend(2 * node, low, middle);
        descend(2 * node + 1, middle, high);
      }
    };
    descend(1, 0, leaves);
  };
}

/** Positions of the entries `keep` accepts, by arrival on the real clock (ties in list order). */
export function byArrival(
  entries: readonly JournalEntry[],
  keep: (e: JournalEntry) => boolean = (e) => !Number.isNaN(e.real_ms),
): number[] {
  const arrival = (k: number) => (entries[k] as JournalEntry).real_ms;
  return entries.flatMap((e, k) => (keep(e) ? [k] : [])).sort((a, b) => arrival(a) - arrival(b) || a - b);
}

/** Requests arriving this close together were sent together (one attempt), even if each was answered at once. */
export const TOGETHER_MS = 10;

/**
 * Peaks of parallelism among the requests `counted` accepts (with a finite real time): `peak(from, to,
 * after)` is the most of them on the wire together (in flight, or sent with it) when one of them arrived,
 * from `from` until before `to` on the real clock, counting only those that arrived from `from` on, and
 * the first position in list order after `after` that saw it; a count of 0 if none did.
 *
 * Each call is one sweep by arrival time over that window: a request counts from its arrival until it
 * is both answered and more than TOGETHER_MS behind the arrival looked at.
 */
export function parallelismPeaks(entries: readonly JournalEntry[], counted: (e: JournalEntry) => boolean) {
  const order = byArrival(entries, (e) => Number.isFinite(e.real_ms) && counted(e));
  const arrived = Float64Array.from(order, (k) => (entries[k] as JournalEntry).real_ms);
  const answered = Float64Array.from(order, (k) => answeredAt(entries[k] as JournalEntry));
  const inFlight = new MinHeap();
  return function peak(from: number, to: number, after: number): { count: number; position: number } {
    const start = firstWhere(order.length, (k) => (arrived[k] as number) >= from);
    const end = firstWhere(order.length, (k) => (arrived[k] as number) >= to);
    let best = { count: 0, position: -1 };
    // Requests from `together` on were sent with the current arrival; `inFlight` holds the answer times
    // of earlier ones that were still in flight at it.
    let together = start;
    inFlight.clear();
    for (let k = start; k < end; ) {
      const t = arrived[k] as number;
      let next = k + 1;
      while (next < end && arrived[next] === t) next++;
      for (; t - (arrived[together] as number) > TOGETHER_MS; together++)
        if ((answered[together] as number) > t) inFlight.push(answered[together] as number);
      while (inFlight.size > 0 && inFlight.min <= t) inFlight.pop();
      const count = next - together + inFlight.size;
      for (; k < next; k++) {
        const position = order[k] as number;
        if (position <= after) continue;
        if (count > best.count || (count === best.count && position < best.position))
          best = { count, position };
      }
    }
    return best;
  };
}

/** A binary min-heap of numbers. */
class MinHeap {
  private items: number[] = [];

  clear() {
    this.items = [];
  }

  get size() {
    return this.items.length;
  }

  get min() {
    return this.items[0] as number;
  }

  push(value: number) {
    const items = this.items;
    let k = items.push(value) - 1;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if ((items[parent] as number) <= value) break;
      items[k] = items[parent] as number;
      k = parent;
    }
    items[k] = value;
  }

  pop() {
    const items = this.items;
    const last = items.pop() as number;
    if (items.length === 0) return;
    let k = 0;
    for (;;) {
      let child = 2 * k + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && (items[child + 1] as number) < (items[child] as number)) child++;
      if ((items[child] as number) >= last) break;
      items[k] = items[child] as number;
      k = child;
    }
    items[k] = last;
  }
}
