import type { JournalEntry } from '../../journal/journal.ts';
import {
  deliveryCompares,
  firstOnConnection,
  hasConnection,
  issuedAfterAnswer,
  pendingFrom,
  pendingUntil,
  SAME_TURN_MS,
  sameConnectionAfter,
  sentBeforeAnswer,
  TOGETHER_MS,
} from './causality.ts';
import { answeredAt } from './entry.ts';
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
