import { CONNECTION_IDS_PER_INSTANCE, type JournalEntry } from '../../journal/journal.ts';
import { answeredAt } from './entry.ts';

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

/*
 * Turn facts. Over node:http the gateway also notes the turn of its event loop in which it read each
 * request (`read_turn`), accepted its connection (`opened_turn`) and, when it answered at once, wrote the
 * answer (`written_turn`). Node asks the system once per turn which sockets are ready, then reads and
 * accepts what was waiting: a request read, or a connection accepted, in the turn in which an answer was
 * written, after it, was on its way before that answer was written, however long the turn took on a loaded
 * machine. That is what SAME_TURN_MS guesses from time: a sequential client's next call, sent once it read
 * the answer, is read a turn later at the earliest, even when a loaded machine brings it within a
 * millisecond (measured, issue 33: 0.3-1.0 ms after the answer, as close as two requests of a wave read
 * in one turn).
 */

/** Connection ids are numbered apart per instance on a shared store: turns compare within one. */
export const instanceOf = (e: JournalEntry) =>
  Math.floor((e.connection as number) / CONNECTION_IDS_PER_INSTANCE);

/**
 * How far from a moment the readings look for what happened in its turn of the gateway's event loop: with
 * turn facts, a turn as long as a loaded machine's stalls (10-20 ms measured; the turn facts then decide);
 * without, a turn is what SAME_TURN_MS says it is. A turn longer than TURN_SCAN_MS reads as shorter.
 */
const TURN_SCAN_MS = 50;
export const turnSpan = (e: JournalEntry) => (e.read_turn === undefined ? SAME_TURN_MS : TURN_SCAN_MS);

/**
 * Whether `e`'s arrival (`read`) or its connection's acceptance (`opened`), at or after `x`'s answer, came
 * in the turn of the gateway's event loop in which that answer was written: then `e` was on its way before
 * it. From the turn facts when both have them on one instance (`x` answered at once); else from time (which
 * load blurs: a reaction may come that soon, a turn may last longer): a request read within SAME_TURN_MS of
 * the answer, a connection accepted less than SAME_TURN_MS after it. A connection accepted a whole
 * SAME_TURN_MS after a lone answer was opened by a client that had the answer (a 429 from the in-process
 * adapter, then a call on a new connection 1 ms later, was taken as on its way and its early call missed).
 */
export function inAnswerTurn(e: JournalEntry, moment: 'read' | 'opened', x: JournalEntry): boolean {
  const at = moment === 'read' ? e.real_ms : (e.connection_opened_ms as number);
  const written = answeredAt(x);
  if (at < written) return false;
  if (turnsCompare(e, moment, x)) return turnOf(e, moment) === x.written_turn;
  return moment === 'read' ? at - written <= SAME_TURN_MS : at - written < SAME_TURN_MS;
}

/** The turn of the gateway's event loop in which `e` was read (`read`) or its connection accepted (`opened`). */
const turnOf = (e: JournalEntry, moment: 'read' | 'opened') =>
  moment === 'read' ? e.read_turn : e.opened_turn;

/**
 * Whether the turn facts decide when `e` was read (`read`) or its connection accepted (`opened`) against
 * `x`'s answer: both have them, from one instance, `x` answered at once (`written_turn`). Then the turns
 * alone say it, however soon after the answer by the clock.
 */
export const turnsCompare = (e: JournalEntry, moment: 'read' | 'opened', x: JournalEntry) =>
  turnOf(e, moment) !== undefined &&
  x.written_turn !== undefined &&
  hasConnection(e) &&
  hasConnection(x) &&
  instanceOf(e) === instanceOf(x);

/**
 * Whether `e` was read two or more turns of the gateway's event loop after the one in which `r`'s answer was
 * written (turn facts, one instance): the loop polled its sockets again after writing that answer, in the
 * next turn, and `e` was not waiting then, so the client sent it after the answer was written, however long
 * the loop stalled in between (a stall delays when a request is read, never which poll finds it waiting).
 */
export function sentAfterAnswerTurn(e: JournalEntry, r: JournalEntry): boolean {
  return turnsCompare(e, 'read', r) && (e.read_turn as number) >= (r.written_turn as number) + 2;
}

/**
 * A run of stalls that ended this close before a moment may still have been under way then: the loop's probe
 * (adapters/node/loop-stall.ts) fires every 10 ms and counts as on time within 20 ms, so no probe on time
 * can have shown the loop caught up sooner.
 */
const CAUGHT_UP_MS = 30;

/**
 * How much of the time between `from`'s answer and `to`'s read the machine may have added to a client's
 * steps (`to`'s `stall_runs`, when one process read both, over node:http or in process; 0 otherwise): the part after the
 * answer of the run of stalls under way when it was written, or begun before the loop caught up after it
 * (the client reading the answer, and so everything it did after, was that much late), and the run under
 * way when `to` was read (a timer of the client's due in it fired when it ended, and the client sent and
 * the loop read the request in it). A stall in between, after which the loop caught up before `to` was
 * read, delayed nothing: a timer due in it would have fired when it ended and its request been read
 * promptly then, not after the loop had caught up. So a long run's many small stalls cannot add up to
 * excuse a real violation, while a loop that never caught up over the whole time (a saturated process)
 * excuses all it lost. From the answer, not the read: a proxy that waited on its target while the machine
 * stalled answered late, and that stall lengthened no wait.
 */
export function stallBetween(from: JournalEntry, to: JournalEntry): number {
  const runs = to.stall_runs;
  if (runs === undefined) return 0;
  const oneProcess =
    (hasConnection(from) && hasConnection(to) && instanceOf(from) === instanceOf(to)) ||
    deliveryCompares(from, to);
  if (!oneProcess) return 0;
  const since = answeredAt(from);
  const until = to.real_ms;
  if (!(until > since)) return 0;
  const within = runs.filter(([start, end]) => end > since && start < until);
  const first = within[0];
  const last = within.at(-1);
  if (first === undefined || last === undefined) return 0;
  const head = first[0] <= since + CAUGHT_UP_MS ? first : undefined;
  const tail = until - last[1] <= CAUGHT_UP_MS ? last : undefined;
  if (head && head === tail) return Math.min(head[2], until - since);
  const lost =
    (head ? Math.min(head[2], head[1] - since) : 0) + (tail ? Math.min(tail[2], until - tail[0]) : 0);
  return Math.min(lost, until - since);
}

type StallRuns = NonNullable<JournalEntry['stall_runs']>;

/**
 * How a journal read as if the loop had not stalled reads each wait: `net`, the least the client may have
 * meant (less all the stalls may have added); `flattest`, within what the stalls allow (from that least to
 * as measured), as near as it can be to the shortest wait of its retry chain (a flat schedule's reading).
 */
export type UnstalledReading = 'net' | 'flattest';

/** The runs of stalls of the entries of a journal read as if the loop had not stalled, set aside. */
const setAside = new WeakMap<JournalEntry, { runs: StallRuns; reading: UnstalledReading }>();

/**
 * The journal as if the gateway's event loop had not stalled (the readings' other side of green means seen):
 * no stall excuses anything (each entry without its runs, so `stallBetween` is 0), and the time the stalls
 * may have added to the client's steps is taken away (`stallsTakenAway`): a retry's wait reads as the least
 * the client may have meant (or, `flattest`, as flat as the stalls allow: `unstalledWaits`), an early
 * request's arrival as the earliest it may have been sent. A rule that finds nothing in the journal but
 * finds a violation so could not observe whether it was kept (rule-readings/stall-decided.ts). Undefined
 * when no stall was noted.
 */
export function asIfUnstalled(
  entries: readonly JournalEntry[],
  reading: UnstalledReading = 'net',
): JournalEntry[] | undefined {
  if (!entries.some((e) => e.stall_runs !== undefined)) return undefined;
  return entries.map(({ stall_runs: runs, ...e }) => {
    const copy = e as JournalEntry;
    if (runs !== undefined) setAside.set(copy, { runs, reading });
    return copy;
  });
}

/**
 * In a journal read as if the loop had not stalled (`asIfUnstalled`), how much earlier than measured the
 * client may have sent `to` after `from`'s answer (`stallBetween`, by the runs set aside); 0 otherwise.
 */
export function stallsTakenAway(from: JournalEntry, to: JournalEntry): number {
  const aside = setAside.get(to);
  return aside === undefined ? 0 : stallBetween(from, { ...to, stall_runs: aside.runs });
}

/**
 * The waits of a retry chain (`measured`: from each answer to the next attempt) as a journal read as if the
 * loop had not stalled reads them (`asIfUnstalled`); as measured otherwise.
 */
export function unstalledWaits(chain: readonly JournalEntry[], measured: readonly number[]): number[] {
  // A wait the stalls touched may have lost up to CAUGHT_UP_MS more than they show (the probe's period and
  // slack: lateness under it is no stall), so the least the client may have meant is that much shorter.
  const least = measured.map((wait, i) => {
    const taken = stallsTakenAway(chain[i] as JournalEntry, chain[i + 1] as JournalEntry);
    return taken > 0 ? Math.max(0, wait - taken - CAUGHT_UP_MS) : wait;
  });
  const flattest = chain.slice(1).some((e) => setAside.get(e)?.reading === 'flattest');
  if (!flattest) return least;
  const shortest = Math.min(...measured);
  return measured.map((wait, i) => Math.min(wait, Math.max(least[i] as number, shortest)));
}

/** The most time `stallsTakenAway` may take from any entry of the journal (0 outside `asIfUnstalled`). */
export const mostTakenAway = (entries: readonly JournalEntry[]) =>
  entries.reduce((most, e) => {
    const aside = setAside.get(e);
    return aside === undefined
      ? most
      : Math.max(
          most,
          aside.runs.reduce((sum, run) => sum + run[2], 0),
        );
  }, 0);
