// One file on purpose: what counts as a reaction to an answer (same turn, same connection, a wave, an idle
// connection net of stalls) is one reading, used by every rule that judges reactions; split, its cases drift.
import type { JournalEntry } from '../../journal/journal.ts';
import {
  deliveryCompares,
  firstOnConnection,
  hasConnection,
  inAnswerTurn,
  issuedAfterAnswer,
  pendingFrom,
  pendingUntil,
  SAME_TURN_MS,
  sameConnectionAfter,
  sentAfterAnswerTurn,
  sentBeforeAnswer,
  stallBetween,
  TOGETHER_MS,
  turnSpan,
  turnsCompare,
} from './causality.ts';
import { answeredAt, keyOf } from './entry.ts';
import { joinsUndecided } from './first-poll.ts';
import { firstWhere } from './search.ts';

/** What the connection facts of one agent's journal tell about its requests, computed once per journal. */
export interface ReactionFacts {
  /**
   * Whether `e` was a reaction to the answer of `r` (sent with it in hand) rather than already on its way:
   * - on `r`'s connection after it: a reaction;
   * - arrived before the answer was written, or the first on a connection accepted before it: on its way;
   * - the first on a connection accepted after it: a reaction, unless the agent had a batch under way when
   *   `r` was answered and this connection joined it (`batchUntil`);
   * - on another connection, open and idle (reused from a pool): a reaction if it arrived once the batch
   *   under way when `r` was answered was over (`batchUntil`: just after the answer when none was) or, the
   *   same request as `r`, past the answer's turn whatever the batch (`retriedOnIdle`), and,
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
   * turn of the event loop in which it was written (`inAnswerTurn`: on another idle connection, or the first
   * on a connection waiting to be accepted). A connection accepted after that, before the answer of one of
   * the batch or within TOGETHER_MS of it, joins it when it may have been waiting to be accepted since before
   * the answer (the tail of a batch opened at once is accepted one connection per turn while its first
   * requests are answered) or takes a slot an answer to the batch freed (a request queued in the client's
   * pool), and so on (`joinBatch`).
   * `r` itself is one of the batch when it was read in the turn of another connection's answer (a wave
   * queued in the client's pool goes out as connections free up). `answeredAt(r) + SAME_TURN_MS` when
   * nothing was under way.
   */
  batchUntil(r: JournalEntry): number;
  /**
   * Whether `e`, arriving within TOGETHER_MS after `x`, was sent together with it: not a reaction to it. On
   * another idle connection (nothing else tells), only when it was read in the turn of `x`'s answer.
   * In process, exactly when neither was issued with the other's answer in hand.
   */
  sentTogether(e: JournalEntry, x: JournalEntry): boolean;
}

const factsOf = new WeakMap<readonly JournalEntry[], ReactionFacts>();

/**
 * A gateway that handled nothing of an agent's for this long had none of its connections waiting to be
 * accepted: an idle event loop accepts at once. Long enough that the stalls of a loaded machine (10-20 ms
 * measured on the shared 2-core machine, during which the gateway handles nothing and accepts nothing) do
 * not pass for one; a storm on new connections sooner than this after a 429's answer, while a request of a
 * batch is on its way, reads as the tail of that batch (docs/agent-developers.md).
 */
export const QUIET_MS = 50;

/** One agent's entries sorted every way the readings below look them up, built once per journal. */
interface TimeIndex {
  /** Every entry by when it was on its way (`starts`), with the latest end among it and those before it. */
  starts: Float64Array;
  latestEnds: Float64Array;
  /** First requests on a connection, by when it was accepted (`opened`). */
  fresh: JournalEntry[];
  opened: Float64Array;
  /** The others with connection facts, by arrival. */
  reused: JournalEntry[];
  reusedArrivals: Float64Array;
  /** Entries with connection facts by when they were answered. */
  withFacts: JournalEntry[];
  answers: Float64Array;
  /** Entries with connection facts by arrival, for `cameInWave`. */
  byArrivalWithFacts: JournalEntry[];
  arrivalsWithFacts: Float64Array;
  /**
   * When the gateway began handling something of the agent's (an accept, an arrival, an answer), sorted,
   * and for each the end of the last quiet stretch (`quietStretches`) up to it.
   */
  moments: Float64Array;
  quietEnds: Float64Array;
}

/**
 * The quiet stretches of an agent's journal: QUIET_MS or more in which the gateway handled nothing of the
 * agent's and had nothing of it waiting. Waiting: a connection accepted whose first request was not read
 * yet. A client writes the request it opened a connection for as soon as it is connected, so a first
 * request read long after its accept shows the gateway's event loop stalled in between (a loaded machine,
 * the gateway busy with others' work, a garbage collection): an event loop that did not read what was
 * waiting did not accept at once either, so the stretch says nothing of when later connections were opened.
 * Measured over HTTP under load (issue 33): a batch of twelve fetches, the sixth connection accepted 2 ms
 * after the first 429 was written and its request read 70-140 ms later, nothing else handled in between;
 * read as quiet, the rest of the batch, accepted after, counted as a storm sent with the 429 in hand.
 * Returns, sorted, when each span of handling began (an accept up to its first request's arrival, an
 * arrival, an answer) and for each the end of the last quiet stretch up to it (minus infinity: none).
 */
function quietStretches(withFacts: readonly JournalEntry[]) {
  const spans = withFacts
    .flatMap((e): [number, number][] => [
      [pendingFrom(e), e.real_ms],
      [answeredAt(e), answeredAt(e)],
    ])
    .sort((a, b) => a[0] - b[0]);
  const moments = Float64Array.from(spans, ([from]) => from);
  const quietEnds = new Float64Array(spans.length);
  let coveredUntil = Number.NEGATIVE_INFINITY;
  let quietEnd = Number.NEGATIVE_INFINITY;
  spans.forEach(([from, to], i) => {
    if (i > 0 && from - coveredUntil >= QUIET_MS) quietEnd = from;
    quietEnds[i] = quietEnd;
    coveredUntil = Math.max(coveredUntil, to);
  });
  return { moments, quietEnds };
}

function timeIndexOf(entries: readonly JournalEntry[]): TimeIndex {
  const valid = entries.filter((e) => !Number.isNaN(pendingFrom(e)));
  const byStart = [...valid].sort((a, b) => pendingFrom(a) - pendingFrom(b));
  const latestEnds = new Float64Array(byStart.length);
  let latest = Number.NEGATIVE_INFINITY;
  byStart.forEach((e, k) => {
    const end = pendingUntil(e);
    if (end > latest) latest = end;
    latestEnds[k] = latest;
  });
  const fresh = valid
    .filter(firstOnConnection)
    .sort((a, b) => (a.connection_opened_ms as number) - (b.connection_opened_ms as number));
  const reused = valid
    .filter((e) => hasConnection(e) && !firstOnConnection(e))
    .sort((a, b) => a.real_ms - b.real_ms);
  const withFacts = valid.filter(hasConnection).sort((a, b) => answeredAt(a) - answeredAt(b));
  const byArrivalWithFacts = valid.filter(hasConnection).sort((a, b) => a.real_ms - b.real_ms);
  const { moments, quietEnds } = quietStretches(valid.filter(hasConnection));
  return {
    starts: Float64Array.from(byStart, pendingFrom),
    latestEnds,
    fresh,
    opened: Float64Array.from(fresh, (e) => e.connection_opened_ms as number),
    reused,
    reusedArrivals: Float64Array.from(reused, (e) => e.real_ms),
    withFacts,
    answers: Float64Array.from(withFacts, answeredAt),
    byArrivalWithFacts,
    arrivalsWithFacts: Float64Array.from(byArrivalWithFacts, (e) => e.real_ms),
    moments,
    quietEnds,
  };
}

/**
 * Whether `r` was read in the turn in which an answer on another connection was written (`inAnswerTurn`):
 * on its way before that answer, so sent with a batch.
 * - What it means: `r` and the other request were both on their way at once, a batch (a wave queued in the
 *   client's pool goes out so, as connections free up), whose tail may still be coming.
 * - The most common real way to break what it protects: a sequential client whose pool hands its calls
 *   alternately to two keep-alive connections, read within a millisecond of the other's answer on a loaded
 *   machine (measured, issue 33), then a storm after its 429: read as the tail of a batch by time alone.
 * - The most unusual legal way to keep it: a wave read in one long turn (a stall): the turn facts say so
 *   however long the turn.
 * - The limit: without turn facts (hand-written journals, answers written after a timer) time decides.
 */
function sentWithOthers(ix: TimeIndex, r: JournalEntry): boolean {
  if (!hasConnection(r)) return false;
  const { answers, withFacts } = ix;
  for (
    let k = firstWhere(answers.length, (j) => (answers[j] as number) >= r.real_ms - turnSpan(r));
    k < withFacts.length && (answers[k] as number) <= r.real_ms;
    k++
  ) {
    const x = withFacts[k] as JournalEntry;
    if (x !== r && x.connection !== r.connection && inAnswerTurn(r, 'read', x)) return true;
  }
  return false;
}

/** The end of the last quiet stretch up to `at` (minus infinity when there was none). */
function quietEndBefore({ moments, quietEnds }: TimeIndex, at: number): number {
  const i = firstWhere(moments.length, (j) => (moments[j] as number) > at) - 1;
  return i >= 0 ? (quietEnds[i] as number) : Number.NEGATIVE_INFINITY;
}

/**
 * A slot freed for `r`'s batch, not yet taken, for a connection accepted at `at` after a quiet stretch
 * that ended at `since`: an answer written since then (give or take TOGETHER_MS: an accept and an answer
 * handled in one turn) to a request of the batch as it was before the stretch (on its way when `r` was
 * answered, `r` itself, or a connection that joined it from the backlog). A connection carries one
 * request at a time: each such answer lets a client with requests queued in its pool send one more. A
 * slot freed before the stretch was free during it: a queued request would have gone out then.
 */
function freedSlot(
  { answers, withFacts }: TimeIndex,
  r: JournalEntry,
  written: number,
  window: { since: number; at: number },
  backlog: Set<JournalEntry>,
  taken: Set<JournalEntry>,
): JournalEntry | undefined {
  for (
    let k = firstWhere(answers.length, (j) => (answers[j] as number) >= window.since);
    k < withFacts.length && (answers[k] as number) <= window.at + TOGETHER_MS;
    k++
  ) {
    const x = withFacts[k] as JournalEntry;
    if (!taken.has(x) && (x === r || pendingFrom(x) < written || backlog.has(x))) return x;
  }
  return undefined;
}

/**
 * The connections accepted after `r`'s answer (at `written`) that joined the batch under way, and until
 * when the batch ran (`until`: its latest end so far, plus TOGETHER_MS). In the order they were accepted:
 * - accepted in the turn of the answer (`inAnswerTurn`), or with no quiet stretch (QUIET_MS)
 *   between the answer and the accept: it may have been waiting in the backlog since before the answer
 *   (Node accepts one connection per turn of its event loop, so the tail of a batch opened at once is
 *   accepted while its first requests are answered, later still on a loaded machine);
 * - after a quiet stretch: nothing was waiting then (an idle event loop accepts at once), so the client
 *   opened it after the stretch began. It joins only on a slot an answer to the batch freed since
 *   (`freedSlot`), one connection a slot: a client whose pool queued requests sends one per answer. Six
 *   new connections right after one slow answer are a storm, not a pool draining its queue: one takes the
 *   slot, the rest were sent with the answer of `r` in hand. Those that join on a slot free none for more.
 * Every connection that joins extends the batch until its own answer.
 * When nothing was under way (`lone`), there is no batch for a connection to be the tail of but one opened
 * with `r`, whose connections were waiting when `r` was answered: the first to join must have been accepted
 * by the loop's first poll after the answer (with turn facts, from the turns alone, however long after the
 * answer by the clock; without, within SAME_TURN_MS of it). Accepted in the answer's turn, it joins; at that
 * first poll, a turn later, it is undecided and joins but in a journal read as if it had reacted
 * (`joinsUndecided`, first-poll.ts); later, it reacted. A sequential client in the gateway's own process
 * is accepted two turns after the answer or more, however fast the machine (measured: 0.3-12 ms after the
 * answer, the same turns every run; by time alone, the fastest of those read as the tail of a batch and its
 * resend or storm was missed, one run in three on a quiet machine).
 */
function joinBatch(ix: TimeIndex, r: JournalEntry, written: number, from: number, lone: boolean) {
  const { opened, fresh } = ix;
  let until = from;
  const joined = new Set<JournalEntry>();
  const backlog = new Set<JournalEntry>();
  const taken = new Set<JournalEntry>();
  const first = firstWhere(opened.length, (j) => (opened[j] as number) >= written);
  // Accepted before the batch's end so far, or in the turn of `r`'s answer (however long that turn was).
  const joins = (k: number) => {
    const x = fresh[k] as JournalEntry;
    if (lone && joined.size === 0 && turnsCompare(x, 'opened', r))
      return inAnswerTurn(x, 'opened', r) || joinsUndecided(x, r);
    return (opened[k] as number) < until || inAnswerTurn(x, 'opened', r);
  };
  for (let k = first; k < opened.length && joins(k); k++) {
    const x = fresh[k] as JournalEntry;
    if (x === r) continue;
    const at = opened[k] as number;
    const quietEnd = quietEndBefore(ix, at);
    if (inAnswerTurn(x, 'opened', r) || !(quietEnd > written)) backlog.add(x);
    else {
      const slot = freedSlot(ix, r, written, { since: quietEnd, at }, backlog, taken);
      if (!slot) continue;
      taken.add(slot);
    }
    joined.add(x);
    until = Math.max(until, pendingUntil(x) + TOGETHER_MS);
  }
  return { until, joined };
}

/** The latest answer among the agent's requests on their way before `t` (minus infinity: none). */
function latestEndBefore({ starts, latestEnds }: TimeIndex, t: number): number {
  const before = firstWhere(starts.length, (k) => !((starts[k] as number) < t));
  return before > 0 ? (latestEnds[before - 1] as number) : Number.NEGATIVE_INFINITY;
}

/** Whether a request of the agent was on its way at `t` (started before it, answered after it). */
const onTheWireAt = (ix: TimeIndex, t: number) => latestEndBefore(ix, t) > t;

// Whether a request on another connection arrived within `graceMs` before `r` (a wave `r` came in); not
// one answered before `r` arrived, outside `r`'s turn: `r` was sent after it (a sequential client's pool).
function cameInWave({ arrivalsWithFacts, byArrivalWithFacts }: TimeIndex, r: JournalEntry, graceMs: number) {
  for (
    let k = firstWhere(
      arrivalsWithFacts.length,
      (j) => (arrivalsWithFacts[j] as number) >= r.real_ms - graceMs,
    );
    k < byArrivalWithFacts.length && (arrivalsWithFacts[k] as number) <= r.real_ms;
    k++
  ) {
    const x = byArrivalWithFacts[k] as JournalEntry;
    const sentAfter = r.real_ms >= answeredAt(x) && !inAnswerTurn(r, 'read', x);
    if (x !== r && x.connection !== r.connection && !sentAfter) return true;
  }
  return false;
}

/**
 * Where the batch under way when `r` was answered (at `written`) ends before new connections join it: the
 * latest end among requests on their way then, requests on other idle connections read in the same turn
 * as the answer (on their way before it), and `written` itself when `r` was part of a batch (read in the
 * same turn as another connection's answer: a wave queued in the client's pool goes out as its
 * connections free up). Minus infinity when nothing was under way.
 */
function underWayUntil(ix: TimeIndex, r: JournalEntry, written: number): number {
  const { reused, reusedArrivals } = ix;
  const latest = latestEndBefore(ix, written);
  let latestEnd = latest > written ? latest : Number.NEGATIVE_INFINITY;
  if (sentWithOthers(ix, r)) latestEnd = Math.max(latestEnd, written);
  if (hasConnection(r)) {
    for (
      let k = firstWhere(reusedArrivals.length, (j) => (reusedArrivals[j] as number) >= written);
      k < reused.length && (reusedArrivals[k] as number) <= written + turnSpan(r);
      k++
    ) {
      const x = reused[k] as JournalEntry;
      if (x !== r && x.connection !== r.connection && inAnswerTurn(x, 'read', r))
        latestEnd = Math.max(latestEnd, pendingUntil(x));
    }
  }
  return latestEnd;
}

/**
 * Whether `e`, on another connection that was open and idle (not `r`'s, not one opened for it), read after
 * `r` was answered, is a retry of `r` whatever batch of other requests was under way: it asks for the same
 * thing (`keyOf`) and arrived past the turn of `r`'s answer (`inAnswerTurn`). Copies of one request sent
 * together on idle connections are read in one turn of the gateway's event loop, by the turn of the first's
 * answer at the latest (`sentTogether` reads them so); a batch of other requests under way tells when the
 * tail of that batch may reach the gateway, not when the client sent this request again.
 * - The most common real way to break a retry rule unseen without it: parallel calls each retried after a
 *   short (jittered) wait on whichever keep-alive connection the pool hands out, while the last of their
 *   first requests is still being read (a client in the gateway's own process, delayed by load): the retry
 *   read as "on its way" cut its call's chain, and the waits counted as first ones.
 * - The most unusual legal way to keep it: two tasks that send the same request at once, one copy on an idle
 *   keep-alive connection read before the other's answer or in its turn: two copies, neither a retry.
 * - The limit: a copy sent before the answer but read more than a turn after it (the machine stalled in
 *   between) reads as `r`'s retry, sent at once.
 */
function retriedOnIdle(e: JournalEntry, r: JournalEntry): boolean {
  const key = keyOf(e);
  return key !== undefined && key === keyOf(r) && !inAnswerTurn(e, 'read', r);
}

/**
 * The reaction facts of a journal (one agent's entries), built once per array: sorted times and prefix
 * maxima, so that each `batchUntil` is a binary search and a walk over the connections that join the batch.
 */
export function createReactionFacts(entries: readonly JournalEntry[]): ReactionFacts {
  const known = factsOf.get(entries);
  if (known) return known;
  const ix = timeIndexOf(entries);
  const memo = new Map<JournalEntry, { until: number; joined: Set<JournalEntry> }>();
  const batchOf = (r: JournalEntry) => {
    const remembered = memo.get(r);
    if (remembered) return remembered;
    const written = answeredAt(r);
    const latestEnd = underWayUntil(ix, r, written);
    const lone = latestEnd === Number.NEGATIVE_INFINITY;
    const batch = joinBatch(ix, r, written, Math.max(written + SAME_TURN_MS, latestEnd + TOGETHER_MS), lone);
    memo.set(r, batch);
    return batch;
  };
  const batchUntil = (r: JournalEntry) => batchOf(r).until;

  const facts: ReactionFacts = {
    batchUntil,
    isReaction(e, r, graceMs) {
      if (deliveryCompares(e, r)) return issuedAfterAnswer(e, r);
      if (sameConnectionAfter(e, r)) return true;
      if (sentBeforeAnswer(e, r)) return false;
      if (firstOnConnection(e)) return !batchOf(r).joined.has(e);
      // Another connection, open and idle (a pool's keep-alive connection): a request read after the answer
      // was written, past the batch under way then (if any), was sent with the answer in hand; so was the
      // same request read past the answer's turn, whatever the batch (`retriedOnIdle`). When `r` came
      // in a wave (another connection's request arrived within `graceMs` before it), the rest of the wave may
      // reach the gateway late (a loaded machine, a client in the gateway's own process): only time tells
      // then, and the grace holds.
      // Time net of the stalls the gateway saw between them (`stallBetween`): a request of a batch read late
      // because the machine stalled was on its way all the same.
      // Never before the answer's turn was over when the turn facts show it sent after the answer.
      if (hasConnection(e) && hasConnection(r)) {
        const netOfStalls = e.real_ms - stallBetween(r, e);
        const arrival = sentAfterAnswerTurn(e, r)
          ? Math.max(netOfStalls, answeredAt(r) + SAME_TURN_MS)
          : netOfStalls;
        return (
          (arrival >= batchUntil(r) || retriedOnIdle(e, r)) &&
          (!cameInWave(ix, r, graceMs) || arrival >= answeredAt(r) + graceMs)
        );
      }
      return e.real_ms >= answeredAt(r) + graceMs;
    },
    sentTogether(e, x) {
      if (e === x) return true;
      // In process: together when neither was issued with the other's answer in hand (whichever is later:
      // under fake timers every request may carry the same time).
      if (deliveryCompares(e, x)) return !issuedAfterAnswer(e, x) && !issuedAfterAnswer(x, e);
      if (e.real_ms - x.real_ms > TOGETHER_MS || sameConnectionAfter(e, x)) return false;
      if (sentBeforeAnswer(e, x)) return true;
      if (firstOnConnection(e)) {
        // A connection accepted after `x` was answered was sent with it only if it joined `x`'s batch and,
        // beyond the turn of that answer (a copy queued in the pool taking the freed slot), while a request
        // of the agent was still on the wire: a chain of connections each accepted once the one before was
        // answered is one request at a time, however fast (a client with no pool, or a pool of one).
        // Joined, not merely accepted before the batch's end: one accepted after a quiet stretch with no slot
        // freed for it is a reaction, however soon after `x` it came.
        const opened = e.connection_opened_ms as number;
        return batchOf(x).joined.has(e) && (inAnswerTurn(e, 'opened', x) || onTheWireAt(ix, opened));
      }
      // Another, idle connection: copies sent together are read in one turn of the gateway's event loop,
      // right after the other's answer; a retry comes a turn of the client's later.
      if (hasConnection(e) && hasConnection(x)) return inAnswerTurn(e, 'read', x);
      return true;
    },
  };
  factsOf.set(entries, facts);
  return facts;
}
