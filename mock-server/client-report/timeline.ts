import { printable } from '../../vocabulary/redact.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { describe, firstWhere, hasDeliveryFacts } from './journal-facts.ts';

/** Requests a timeline shows: the agent's most recent; earlier ones are counted. */
export const TIMELINE_REQUESTS = 40;

/**
 * For each in-process entry (delivery facts), the latest of the agent's own answers it was issued with in
 * hand: `after #12` in the timeline. Over node:http the connection says it instead.
 */
function answersInHand(entries: readonly JournalEntry[]): Map<JournalEntry, JournalEntry> {
  // Answer orders count per adapter (delivery instance): a shared journal holds several counts.
  const byInstance = new Map<JournalEntry['delivery_instance'], JournalEntry[]>();
  for (const e of entries) {
    if (!hasDeliveryFacts(e)) continue;
    const group = byInstance.get(e.delivery_instance);
    if (group) group.push(e);
    else byInstance.set(e.delivery_instance, [e]);
  }
  const inHand = new Map<JournalEntry, JournalEntry>();
  for (const group of byInstance.values()) {
    const delivered = [...group].sort((a, b) => (a.answer_order as number) - (b.answer_order as number));
    for (const e of group) {
      const k = firstWhere(
        delivered.length,
        (j) => (delivered[j]?.answer_order as number) > (e.answers_seen as number),
      );
      const last = delivered[k - 1];
      if (last) inHand.set(e, last);
    }
  }
  return inHand;
}

/**
 * What the agent did, one request per line (oldest first), relative to its first request, with what tells a
 * reaction from a request already on its way: the connection it came on (over node:http: a request on the
 * connection of a refusal, after it, reacted to it), or in process the latest answer the agent had in hand
 * when it issued the request (`after #12`: issued once #12 was answered; `before any answer`). The client
 * report carries it (`timeline`), so every harness shows the same account.
 */
export function timelineOf(
  entries: readonly JournalEntry[],
  agent: string,
  last = TIMELINE_REQUESTS,
): string {
  const start = entries[0]?.real_ms ?? 0;
  const shown = entries.slice(-last);
  const inHand = answersInHand(entries);
  const lines = shown.map((e) => {
    const after = inHand.get(e);
    const extra = [
      e.connection !== undefined ? `conn ${e.connection}` : '',
      hasDeliveryFacts(e) ? (after ? `after #${after.seq}` : 'before any answer') : '',
      e.retry_after !== undefined ? `Retry-After ${e.retry_after}` : '',
      e.query ?? e.url ?? '',
    ]
      .filter(Boolean)
      .join('  ');
    return `  +${((e.real_ms - start) / 1000).toFixed(3).padStart(8)} s  ${describe(e)}${extra ? `  ${extra}` : ''}`;
  });
  const skipped = entries.length - shown.length;
  return printable(
    [
      `What ${agent} did (${entries.length} requests):`,
      ...(skipped > 0 ? [`  ... ${skipped} earlier requests`] : []),
      ...lines,
    ].join('\n'),
  );
}
