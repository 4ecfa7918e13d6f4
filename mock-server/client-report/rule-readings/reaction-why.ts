import type { JournalEntry } from '../../journal/journal.ts';
import {
  answeredAt,
  deliveryCompares,
  firstOnConnection,
  hasConnection,
  issuedAfterAnswer,
  sameConnectionAfter,
} from '../journal-facts.ts';

const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;

/**
 * Why `e` is taken as a reaction to the answer of `r`, in words, and whether that is a fact of the journal
 * or an inference: issued with `r`'s answer in hand (a fact: the in-process delivery facts, whatever the
 * time between them), on `r`'s connection after its answer (a fact: HTTP/1.1 sends one request at a time per
 * connection), or the first on a connection accepted after the answer with no batch under way (a fact:
 * clients open a connection for a request they have), or on another, already open connection or without
 * connection facts (told by time only: an inference).
 */
export function whyReaction(e: JournalEntry, r: JournalEntry): { says: string; inference: boolean } {
  if (deliveryCompares(e, r) && issuedAfterAnswer(e, r))
    return { says: `issued with the answer of #${r.seq} in hand (in process)`, inference: false };
  const after = seconds(e.real_ms - answeredAt(r));
  if (sameConnectionAfter(e, r))
    return { says: `on the connection of #${r.seq}, ${after} after its answer`, inference: false };
  if (firstOnConnection(e))
    return {
      says: `on a connection opened ${after} after #${r.seq} was answered, with no batch of the agent under way`,
      inference: false,
    };
  if (hasConnection(e))
    return {
      says: `on another connection already open, ${after} after #${r.seq} was answered (told by time only)`,
      inference: true,
    };
  return {
    says: `${after} after #${r.seq} was answered, without connection facts (told by time only)`,
    inference: true,
  };
}

/**
 * The inference a repeat after a refusal rests on (`refresh-invalid-token`, `no-retry-on-access-denied`), as
 * a finding's `inference`: only when time alone told it a reaction (`whyReaction`); a fact needs none.
 */
export function resentInference(
  e: JournalEntry,
  r: JournalEntry,
  refusal: 'refusal' | 'denial',
): { inference?: string } {
  const why = whyReaction(e, r);
  return why.inference ? { inference: `taken as sent with the ${refusal} in hand: ${why.says}` } : {};
}

export { seconds };
