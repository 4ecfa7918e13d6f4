import { PROTECTED_ENDPOINTS } from '../../spec/endpoints.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../spec/retry-after.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal/journal.ts';

/** A failed attempt: rate-limited, a server error, or a dropped connection. */
export const isFailure = (e: JournalEntry) => e.status === 429 || e.status === 0 || e.status >= 500;

/** When the answer was written to the client, on the real clock (when it was built, for hand-written entries). */
export const answeredAt = (e: JournalEntry) => e.written_ms ?? e.real_ms + e.duration_ms;

/**
 * What a request asked for, for recognising its retries: its meaning (`request_key`: case, spacing,
 * punctuation and ignored fields do not count) where the journal has it, else its bytes.
 */
export const keyOf = (e: JournalEntry) => e.request_key ?? e.request_fingerprint;

/*
 * Connection facts. Over node:http the journal knows each request's connection, when the gateway accepted
 * it, and which request it was on it. HTTP/1.1 clients (fetch/undici, ky, got, axios) send one request at a
 * time on a connection and open one only when they have a request to send and no idle connection. So,
 * whatever the load on the machine (it delays when the gateway gets to a request, not what the client did):
 * - a request on the same connection as an answer, after it, was sent once the client had that answer;
 * - the first request on a connection accepted before an answer was written was on its way before it.
 * A connection accepted after an answer was written proves nothing by itself: Node accepts about one
 * connection per turn of its event loop, so the tail of a parallel batch the client opened at once is
 * accepted while the first requests of the batch are being answered (measured: a batch of 8 fetches, the 8th
 * connection accepted after the 4th answer, every time). What tells a batch from a reaction is whether a
 * batch was under way: see `createReactionFacts`. A request on another connection that was open and idle
 * (reused) is told apart by nothing but time.
 */

/** Whether the journal has the request's connection (node:http; msw and direct fetch calls have none). */
export const hasConnection = (e: JournalEntry) =>
  e.connection !== undefined && e.connection_opened_ms !== undefined;

/*
 * Delivery facts. In process (msw, direct fetch calls) there is no connection, but the adapter numbers the
 * answers in the order it handed them back to the caller and notes, for each request, how many it had handed
 * back when the request was issued. That is causality itself, with no time in it: whatever the machine's
 * load, a request issued with a refusal's answer in hand reacted to it (0 ms later included), and one issued
 * before it was on its way (however slowly it was served).
 */

/** Whether the journal has the request's delivery facts (in process: msw, direct fetch calls). */
export const hasDeliveryFacts = (e: JournalEntry) =>
  e.answers_seen !== undefined && e.answer_order !== undefined;

/** Whether both requests have delivery facts from one adapter, so that their counts compare. */
export const deliveryCompares = (e: JournalEntry, r: JournalEntry) =>
  hasDeliveryFacts(e) && hasDeliveryFacts(r) && e.delivery_instance === r.delivery_instance;

/** Whether `e` was issued with the answer to `r` in hand (both with delivery facts from one adapter). */
export const issuedAfterAnswer = (e: JournalEntry, r: JournalEntry) =>
  (e.answers_seen as number) >= (r.answer_order as number);

/** Whether what the client had in hand is known for the request: connection facts or delivery facts. */
export const hasCausalFacts = (e: JournalEntry) => hasConnection(e) || hasDeliveryFacts(e);

// A connection accepted this long before its first request arrived was not opened for it (or the count of
// its requests was lost): the request counts from its arrival only.
const OPENED_FOR_IT_MS = 10_000;

/** Whether the request was the first on its connection, which the client opened to send it. */
export const firstOnConnection = (e: JournalEntry) =>
  hasConnection(e) &&
  e.connection_seq === 1 &&
  e.real_ms - (e.connection_opened_ms as number) <= OPENED_FOR_IT_MS;

/**
 * From when the client certainly had the request on its way, on the real clock: the acceptance of its
 * connection for the first request on one, its arrival otherwise.
 */
export const pendingFrom = (e: JournalEntry) =>
  firstOnConnection(e) ? Math.min(e.connection_opened_ms as number, e.real_ms) : e.real_ms;

/** Until when the client certainly had the request on its way: its answer (never before `pendingFrom`). */
export const pendingUntil = (e: JournalEntry) => Math.max(answeredAt(e), pendingFrom(e));

/** Whether `e` came on the same connection as `r`, after its answer: sent with that answer in hand. */
export const sameConnectionAfter = (e: JournalEntry, r: JournalEntry) =>
  hasConnection(e) && hasConnection(r) && e.connection === r.connection && e.real_ms >= answeredAt(r);

/** Whether `e` was certainly on its way before the client had the answer to `r`. */
export const sentBeforeAnswer = (e: JournalEntry, r: JournalEntry) => pendingFrom(e) < answeredAt(r);

/** What the connection facts of one agent's journal tell about its requests, computed once per journal. */
export interface ReactionFacts {
  /**
   * Whether `e` was a reaction to the answer of `r` (sent with it in hand) rather than already on its way:
   * - on `r`'s connection after it: a reaction;
   * - arrived before the answer was written, or the first on a connection accepted before it: on its way;
   * - the first on a connection accepted after it: a reaction, unless the agent had a batch under way when
   *   `r` was answered and this connection joined it (`batchUntil`);
   * - on another connection, open and idle (reused from a pool): a reaction if it arrived once the batch
   *   under way when `r` was answered was over (`batchUntil`: just after the answer when none was), and,
   *   when `r` came in a wave (a request on another connection arrived within `graceMs` before it), once
   *   `graceMs` had passed since the answer;
   * - without connection facts: a reaction if it arrived `graceMs` or more after the answer was written.
   * In process (both with delivery facts), none of that: a reaction exactly when it was issued with the
   * answer in hand, whatever `graceMs`.
   */
  isReaction(e: JournalEntry, r: JournalEntry, graceMs: number): boolean;
  /**
   * Until when connections accepted after `r` was answered belong to a batch that was under way then. The
   * batch: the agent's requests on their way when `r` was answered (other than `r`), and those read in the
   * same turn of the event loop (within SAME_TURN_MS of the answer: on another idle connection, or the first
   * on a connection waiting to be accepted). A connection accepted after that, before the answer of one of
   * the batch or within TOGETHER_MS of it, joins it (the tail of a batch opened at once, or queued in the
   * client's pool, is accepted one connection per turn while its first requests are answered), and so on.
   * `r` itself is one of the batch when it was read in the same turn as another connection's answer (a wave
   * queued in the client's pool goes out as connections free up). `answeredAt(r) + SAME_TURN_MS` when
   * nothing was under way.
   */
  batchUntil(r: JournalEntry): number;
  /**
   * Whether `e`, arriving within TOGETHER_MS after `x`, was sent together with it: not a reaction to it. On
   * another idle connection (nothing else tells), only when it arrived within SAME_TURN_MS of `x`'s answer.
   * In process, exactly when neither was issued with the other's answer in hand.
   */
  sentTogether(e: JournalEntry, x: JournalEntry): boolean;
}

const factsOf = new WeakMap<readonly JournalEntry[], ReactionFacts>();

/**
 * The reaction facts of a journal (one agent's entries), built once per array: sorted times and prefix
 * maxima, so that each `batchUntil` is a binary search and a walk over the connections that join the batch.
 */
export function createReactionFacts(entries: readonly JournalEntry[]): ReactionFacts {
  const known = factsOf.get(entries);
  if (known) return known;
  const valid = entries.filter((e) => !Number.isNaN(pendingFrom(e)));
  // Every entry by when it was on its way, with the latest end among it and those before it.
  const byStart = [...valid].sort((a, b) => pendingFrom(a) - pendingFrom(b));
  const starts = Float64Array.from(byStart, pendingFrom);
  const latestEnds = new Float64Array(byStart.length);
  let latest = Number.NEGATIVE_INFINITY;
  byStart.forEach((e, k) => {
    const end = pendingUntil(e);
    if (end > latest) latest = end;
    latestEnds[k] = latest;
  });
  // First requests on a connection, by when it was accepted; the others with connection facts, by arrival.
  const fresh = valid
    .filter(firstOnConnection)
    .sort((a, b) => (a.connection_opened_ms as number) - (b.connection_opened_ms as number));
  const opened = Float64Array.from(fresh, (e) => e.connection_opened_ms as number);
  const reused = valid
    .filter((e) => hasConnection(e) && !firstOnConnection(e))
    .sort((a, b) => a.real_ms - b.real_ms);
  const reusedArrivals = Float64Array.from(reused, (e) => e.real_ms);
  // Entries with connection facts by when they were answered.
  const withFacts = valid.filter(hasConnection).sort((a, b) => answeredAt(a) - answeredAt(b));
  const answers = Float64Array.from(withFacts, answeredAt);
  /** Whether `r` was read in the same turn as an answer on another connection: sent with a batch. */
  const sentWithOthers = (r: JournalEntry) => {
    if (!hasConnection(r)) return false;
    for (
      let k = firstWhere(answers.length, (j) => (answers[j] as number) >= r.real_ms - SAME_TURN_MS);
      k < withFacts.length && (answers[k] as number) <= r.real_ms;
      k++
    ) {
      const x = withFacts[k] as JournalEntry;
      if (x !== r && x.connection !== r.connection) return true;
    }
    return false;
  };
  const memo = new Map<JournalEntry, number>();
  // Entries with connection facts by arrival, for `cameInWave`.
  const byArrivalWithFacts = valid.filter(hasConnection).sort((a, b) => a.real_ms - b.real_ms);
  const arrivalsWithFacts = Float64Array.from(byArrivalWithFacts, (e) => e.real_ms);
  /** Whether a request on another connection arrived within `graceMs` before `r` (a wave `r` came in). */
  const cameInWave = (r: JournalEntry, graceMs: number) => {
    for (
      let k = firstWhere(
        arrivalsWithFacts.length,
        (j) => (arrivalsWithFacts[j] as number) >= r.real_ms - graceMs,
      );
      k < byArrivalWithFacts.length && (arrivalsWithFacts[k] as number) <= r.real_ms;
      k++
    ) {
      const x = byArrivalWithFacts[k] as JournalEntry;
      if (x !== r && x.connection !== r.connection) return true;
    }
    return false;
  };

  const batchUntil = (r: JournalEntry): number => {
    const remembered = memo.get(r);
    if (remembered !== undefined) return remembered;
    const written = answeredAt(r);
    // The latest end among requests on their way before `written`: past it, one was under way then.
    const before = firstWhere(starts.length, (k) => !((starts[k] as number) < written));
    let latestEnd = before > 0 ? (latestEnds[before - 1] as number) : Number.NEGATIVE_INFINITY;
    if (!(latestEnd > written)) latestEnd = Number.NEGATIVE_INFINITY;
    // Requests on other idle connections read in the same turn as the answer: on their way before it.
    // `r` itself part of a batch: read in the same turn as another connection's answer (a wave queued in the
    // client's pool goes out as its connections free up).
    if (sentWithOthers(r)) latestEnd = Math.max(latestEnd, written);
    if (hasConnection(r)) {
      for (
        let k = firstWhere(reusedArrivals.length, (j) => (reusedArrivals[j] as number) >= written);
        k < reused.length && (reusedArrivals[k] as number) <= written + SAME_TURN_MS;
        k++
      ) {
        const x = reused[k] as JournalEntry;
        if (x !== r && x.connection !== r.connection) latestEnd = Math.max(latestEnd, pendingUntil(x));
      }
    }
    // A connection accepted in the same turn as the answer was waiting to be accepted before it: on its way.
    // One accepted later joins the batch when accepted before the latest end of its members so far (give or
    // take TOGETHER_MS: the accept and that answer are handled in one turn of the event loop).
    let until = Math.max(written + SAME_TURN_MS, latestEnd + TOGETHER_MS);
    for (let k = firstWhere(opened.length, (j) => (opened[j] as number) >= written); k < opened.length; k++) {
      if (!((opened[k] as number) < until)) break;
      if (fresh[k] !== r) until = Math.max(until, pendingUntil(fresh[k] as JournalEntry) + TOGETHER_MS);
    }
    memo.set(r, until);
    return until;
  };

  const facts: ReactionFacts = {
    batchUntil,
    isReaction(e, r, graceMs) {
      if (deliveryCompares(e, r)) return issuedAfterAnswer(e, r);
      if (sameConnectionAfter(e, r)) return true;
      if (sentBeforeAnswer(e, r)) return false;
      if (firstOnConnection(e)) return (e.connection_opened_ms as number) >= batchUntil(r);
      // Another connection, open and idle (a pool's keep-alive connection): a request read after the answer
      // was written, past the batch under way then (if any), was sent with the answer in hand. When `r` came
      // in a wave (another connection's request arrived within `graceMs` before it), the rest of the wave may
      // reach the gateway late (a loaded machine, a client in the gateway's own process): only time tells
      // then, and the grace holds.
      if (hasConnection(e) && hasConnection(r))
        return (
          e.real_ms >= batchUntil(r) && (!cameInWave(r, graceMs) || e.real_ms >= answeredAt(r) + graceMs)
        );
      return e.real_ms >= answeredAt(r) + graceMs;
    },
    sentTogether(e, x) {
      if (e === x) return true;
      // In process: together when neither was issued with the other's answer in hand (whichever is later:
      // under fake timers every request may carry the same time).
      if (deliveryCompares(e, x)) return !issuedAfterAnswer(e, x) && !issuedAfterAnswer(x, e);
      if (e.real_ms - x.real_ms > TOGETHER_MS || sameConnectionAfter(e, x)) return false;
      if (sentBeforeAnswer(e, x)) return true;
      if (firstOnConnection(e)) return (e.connection_opened_ms as number) < batchUntil(x);
      // Another, idle connection: copies sent together are read in one turn of the gateway's event loop,
      // right after the other's answer; a retry comes a turn of the client's later.
      if (hasConnection(e) && hasConnection(x)) return e.real_ms - answeredAt(x) <= SAME_TURN_MS;
      return true;
    },
  };
  factsOf.set(entries, facts);
  return facts;
}

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
  if (refusal.status !== 429) {
    const key = keyOf(refusal);
    return (e) => key !== undefined && keyOf(e) === key;
  }
  const rule = rules.find((r) => r.name === refusal.limit?.rule);
  if (!rule || rule.scope === 'agent_tool') return (e) => e.operation === refusal.operation;
  const counted: readonly string[] = rule.operations ?? PROTECTED_ENDPOINTS;
  return (e) => counted.includes(e.operation);
}

/** Short human text for one request, e.g. `#12 POST /v1/web/search -> 429 rate_limited`. */
export const describe = (e: JournalEntry) =>
  `#${e.seq} ${e.method} ${e.path} -> ${e.status === 0 ? 'dropped' : e.status}${e.code ? ` ${e.code}` : ''}`;

/**
 * Retry chains: runs of requests with the same key where each one is a retry of the one before (a reaction
 * to its failure, with no grace: an immediate retry is a retry). `continueAfter` decides which failures a chain continues
 * after. Copies of a request sent in parallel make parallel chains: a retry continues the one that failed
 * first (first failed, first retried: a client retrying parallel copies on one schedule), whichever
 * connection its pool hands the retry (a pool hands out the connection just freed, not the copy's own).
 */
export function retryChains(
  entries: readonly JournalEntry[],
  continueAfter: (e: JournalEntry) => boolean,
): JournalEntry[][] {
  const facts = createReactionFacts(entries);
  const open = new Map<string, JournalEntry[][]>();
  const chains: JournalEntry[][] = [];
  for (const e of entries) {
    const key = keyOf(e);
    if (!key) continue;
    const candidates = open.get(key) ?? [];
    let chosen: JournalEntry[] | undefined;
    for (const chain of candidates) {
      const last = chain.at(-1) as JournalEntry;
      if (!continueAfter(last) || !facts.isReaction(e, last, 0)) continue;
      if (!chosen || answeredAt(last) < answeredAt(chosen.at(-1) as JournalEntry)) chosen = chain;
    }
    if (chosen) chosen.push(e);
    else {
      chosen = [e];
      chains.push(chosen);
    }
    // A chain stays open while its last attempt failed; only the open ones are kept per key.
    const stillOpen = candidates.filter((c) => c !== chosen);
    if (continueAfter(e)) stillOpen.push(chosen);
    open.set(key, stillOpen);
  }
  return chains;
}

/** Time from each answer to the next attempt, in real milliseconds. */
export const intervalsOf = (chain: readonly JournalEntry[]) =>
  chain.slice(1).map((e, i) => e.real_ms - answeredAt(chain[i] as JournalEntry));

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
 * with its key ahead of the first entry whose seq is not below its own: just ahead of it, when
 * the entries are oldest first as the report passes them.
 */
export function honouringOwnRetryAfter(entries: readonly JournalEntry[]): ReadonlySet<JournalEntry> {
  // Two rules ask for it over the same journal: worked out once per array.
  const known = honouringOf.get(entries);
  if (known) return known;
  const highestSeq: number[] = [];
  for (const e of entries) highestSeq.push(Math.max(e.seq, highestSeq.at(-1) ?? -Infinity));
  // The attempts to judge once the entries ahead of each position are known.
  const judgedAt = new Map<number, JournalEntry[]>();
  for (const f of entries) {
    if (!keyOf(f)) continue;
    const place = firstWhere(entries.length, (k) => (highestSeq[k] as number) >= f.seq);
    const judged = judgedAt.get(place);
    if (judged) judged.push(f);
    else judgedAt.set(place, [f]);
  }
  const honouring = new Set<JournalEntry>();
  const previous = new Map<string, JournalEntry>();
  entries.forEach((e, k) => {
    for (const f of judgedAt.get(k) ?? []) {
      const before = previous.get(keyOf(f) as string);
      const until = before ? retryAfterUntil(before) : undefined;
      if (until !== undefined && f.at >= until - TOLERANCE_MS) honouring.add(f);
    }
    const key = keyOf(e);
    if (key) previous.set(key, e);
  });
  honouringOf.set(entries, honouring);
  return honouring;
}
const honouringOf = new WeakMap<readonly JournalEntry[], ReadonlySet<JournalEntry>>();

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

/**
 * Requests arriving this close together were sent together (one attempt), even if each was answered at once,
 * unless the connection facts show the later one reacted to the earlier one's answer (the same connection,
 * or a new connection with no batch under way): a tight sequential loop is not a parallel batch.
 */
export const TOGETHER_MS = 10;

/**
 * Copies sent together on two idle connections are read by the gateway in one turn of its event loop, so the
 * second arrives within this much of the first's answer; a sequential retry on the other connection comes a
 * turn of the client's later (measured: about 2 ms on loopback, more under load).
 */
export const SAME_TURN_MS = 1;

/**
 * Peaks of parallelism: `peak(from, to, after, counted)` is the most requests `counted` accepts (with a
 * finite real time, arriving from `from` until before `to`) on the wire together when one of them arrived,
 * and the first position in list order after `after` that saw it; a count of 0 if none did.
 *
 * A request is on the wire from `pendingFrom` (its arrival, or the acceptance of its connection for the
 * first request on one) until its answer was written, and for TOGETHER_MS after its arrival with the
 * requests sent together with it. Counted at an arrival `t`: those on the wire at `t` (sorted start and end
 * times give their number), and those that arrived in the TOGETHER_MS before, sent together with it.
 */
export function parallelismPeaks(entries: readonly JournalEntry[]) {
  const order = byArrival(entries, (e) => Number.isFinite(e.real_ms));
  const arrived = new Float64Array(order.length);
  order.forEach((k, i) => {
    arrived[i] = (entries[k] as JournalEntry).real_ms;
  });
  // Per position: when it was on its way from and until.
  const from = new Float64Array(entries.length);
  const until = new Float64Array(entries.length);
  entries.forEach((e, k) => {
    from[k] = pendingFrom(e);
    until[k] = pendingUntil(e);
  });
  const facts = createReactionFacts(entries);
  return function peak(
    windowFrom: number,
    windowTo: number,
    after: number,
    counted: (e: JournalEntry) => boolean,
  ): { count: number; position: number; members: number[] } {
    // The counted requests of the window, by arrival.
    const members: number[] = [];
    for (let k = atLeast(arrived, windowFrom); k < order.length && (arrived[k] as number) < windowTo; k++) {
      const position = order[k] as number;
      if (counted(entries[position] as JournalEntry)) members.push(position);
    }
    let count = 0;
    let best = -1;
    if (members.length === 0) return { count, position: best, members };
    const starts = new Float64Array(members.length);
    const ends = new Float64Array(members.length);
    members.forEach((position, j) => {
      starts[j] = from[position] as number;
      ends[j] = until[position] as number;
    });
    starts.sort();
    ends.sort();
    for (let j = 0; j < members.length; j++) {
      const position = members[j] as number;
      if (position <= after) continue;
      const e = entries[position] as JournalEntry;
      const t = e.real_ms;
      // On their way at t (started by then, not yet answered), then those answered already but sent
      // together with `e`: itself, the ones just before it, ties after it.
      let here = countAtMost(starts, t) - countAtMost(ends, t);
      for (let i = j; i >= 0; i--) {
        const x = members[i] as number;
        const arrival = (entries[x] as JournalEntry).real_ms;
        if (t - arrival > TOGETHER_MS) break;
        if ((until[x] as number) <= t && facts.sentTogether(e, entries[x] as JournalEntry)) here++;
      }
      for (let i = j + 1; i < members.length; i++) {
        const x = members[i] as number;
        if ((entries[x] as JournalEntry).real_ms > t) break;
        if ((until[x] as number) <= t && facts.sentTogether(e, entries[x] as JournalEntry)) here++;
      }
      if (here > count || (here === count && position < best)) {
        count = here;
        best = position;
      }
    }
    return { count, position: best, members };
  };
}

/** The first index of sorted `values` at or above `t` (their length if none). */
function atLeast(values: Float64Array, t: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) >= t) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** How many of sorted `values` are at most `t`. */
function countAtMost(values: Float64Array, t: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) > t) high = middle;
    else low = middle + 1;
  }
  return low;
}
