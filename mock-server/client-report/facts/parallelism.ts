import type { JournalEntry } from '../../journal/journal.ts';
import { pendingFrom, pendingUntil, TOGETHER_MS } from './causality.ts';
import { createReactionFacts } from './reactions.ts';
import { byArrival } from './search.ts';

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
