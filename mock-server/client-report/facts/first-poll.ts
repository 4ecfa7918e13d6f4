import type { JournalEntry } from '../../journal/journal.ts';
import { firstOnConnection, turnsCompare } from './causality.ts';

/*
 * After a lone answer (nothing else of the agent's on its way), a new connection accepted at the gateway's
 * first poll after the answer is undecided: the reaction facts (reactions.ts `joinBatch`) read it as the tail
 * of a batch, and a journal read as if it had reacted (`asIfUndecidedReacted`) tells the rules whether that
 * reading alone kept them from failing (rule-readings/undecided-accepts.ts).
 */

/** Entries of a journal read with every undecided accept taken as a reaction (`asIfUndecidedReacted`). */
const undecidedReacted = new WeakSet<JournalEntry>();

/**
 * Whether `e`'s connection was accepted in the turn right after the one in which `r`'s answer was written
 * (the loop's first poll after it; turn facts, one instance): undecided after a lone answer. Waiting at that
 * poll, it may have been the tail of a batch opened with `r` (the client in another process, or its threads
 * started apart, connecting while the gateway answered `r`), or sent once the client had read the answer
 * while the gateway, in another process, had not polled yet (measured, clients in other processes beside
 * CPU burners: 7 of 46 tails of batches and 5 of 149 reactions came so; none of either a turn later or
 * more, and reactions never in the answer's turn).
 */
const acceptedTurnAfter = (e: JournalEntry, r: JournalEntry) =>
  turnsCompare(e, 'opened', r) && e.opened_turn === (r.written_turn as number) + 1;

/**
 * The journal with every undecided accept (`acceptedTurnAfter` a lone answer) read as a reaction to that
 * answer: a rule that finds nothing in the journal but finds a violation so could not observe whether it was
 * kept (rule-readings/undecided-accepts.ts). Undefined when no connection was accepted so.
 */
export function asIfUndecidedReacted(entries: readonly JournalEntry[]): JournalEntry[] | undefined {
  const writtenTurns = new Set<number>();
  for (const e of entries) if (e.written_turn !== undefined) writtenTurns.add(e.written_turn);
  const undecided = entries.some(
    (e) => firstOnConnection(e) && e.opened_turn !== undefined && writtenTurns.has(e.opened_turn - 1),
  );
  if (!undecided) return undefined;
  return entries.map((e) => {
    const copy = { ...e };
    undecidedReacted.add(copy);
    return copy;
  });
}

/**
 * Whether `e`, the first connection after the lone answer of `r`, joins `r`'s batch though undecided
 * (`acceptedTurnAfter`): yes, but in a journal read as if it had reacted.
 */
export const joinsUndecided = (e: JournalEntry, r: JournalEntry) =>
  acceptedTurnAfter(e, r) && !undecidedReacted.has(r);
