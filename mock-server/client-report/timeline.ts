import { printable } from '../../vocabulary/redact.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { describe, firstWhere, hasDeliveryFacts } from './journal-facts.ts';

/** Requests a timeline shows: the agent's most recent; earlier ones are counted. */
export const TIMELINE_REQUESTS = 40;

/**
 * For each shown in-process entry (delivery facts), the latest of the agent's own answers it was issued with
 * in hand (the highest answer order at most its answers seen, of its adapter): `after #12` in the timeline.
 * Over node:http the connection says it instead. One pass over the entries, each placed by a binary search
 * among the few shown, so a report of a long journal pays little for its timeline.
 */
export function answersInHand(
  entries: readonly JournalEntry[],
  shown: readonly JournalEntry[] = entries,
): Map<JournalEntry, JournalEntry> {
  // Answer orders count per adapter (delivery instance): a shared journal holds several counts.
  const asking = new Map<JournalEntry['delivery_instance'], JournalEntry[]>();
  for (const e of shown) {
    if (!hasDeliveryFacts(e)) continue;
    const group = asking.get(e.delivery_instance);
    if (group) group.push(e);
    else asking.set(e.delivery_instance, [e]);
  }
  const seen = (e: JournalEntry) => e.answers_seen as number;
  const order = (e: JournalEntry) => e.answer_order as number;
  // best[k]: the latest answer of those with an order at most group[k]'s seen and above group[k - 1]'s.
  const best = new Map<JournalEntry[], (JournalEntry | undefined)[]>();
  for (const group of asking.values()) {
    group.sort((a, b) => seen(a) - seen(b));
    best.set(group, []);
  }
  for (const answer of entries) {
    const group = hasDeliveryFacts(answer) ? asking.get(answer.delivery_instance) : undefined;
    if (!group) continue;
    const k = firstWhere(group.length, (j) => seen(group[j] as JournalEntry) >= order(answer));
    const slots = best.get(group) as (JournalEntry | undefined)[];
    const held = slots[k];
    if (k < group.length && (held === undefined || order(held) <= order(answer))) slots[k] = answer;
  }
  const inHand = new Map<JournalEntry, JournalEntry>();
  for (const [group, slots] of best) {
    let latest: JournalEntry | undefined;
    group.forEach((e, k) => {
      const here = slots[k];
      if (here && (latest === undefined || order(here) >= order(latest))) latest = here;
      if (latest) inHand.set(e, latest);
    });
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
  const inHand = answersInHand(entries, shown);
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
