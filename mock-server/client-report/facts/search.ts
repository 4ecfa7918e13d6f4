import type { JournalEntry } from '../../journal/journal.ts';

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
