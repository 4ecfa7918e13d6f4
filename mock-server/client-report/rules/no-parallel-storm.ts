import type { JournalEntry } from '../../journal.ts';
import {
  byArrival,
  describe,
  firstWhere,
  honouringOwnRetryAfter,
  parallelismPeaks,
  reactionsFrom,
  retryAfterDelay,
} from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

/** The `count` smallest of `positions`, in order. */
function firstPositions(positions: readonly number[], count: number): number[] {
  const first: number[] = [];
  for (const k of positions) {
    if (first.length === count) {
      if (k >= (first.at(-1) as number)) continue;
      first.pop();
    }
    let at = first.length;
    while (at > 0 && (first[at - 1] as number) > k) at--;
    first.splice(at, 0, k);
  }
  return first;
}

export const noParallelStorm: ClientRule = {
  id: 'no-parallel-storm',
  title: 'After a 429, concurrency is reduced: no parallel storm while the limit is in force',
  specRef: '§7 (429: reduce concurrency)',
  judge({ entries, options }) {
    const findings: Finding[] = [];
    // Retries that waited out their own Retry-After are not part of a storm.
    const honouring = honouringOwnRetryAfter(entries);
    const parallelism = parallelismPeaks(entries, (e) => !honouring.has(e));
    const arrivals = byArrival(entries);
    const arrival = (k: number) => (entries[arrivals[k] as number] as JournalEntry).real_ms;
    entries.forEach((refusal, i) => {
      if (refusal.status !== 429) return;
      const from = reactionsFrom(refusal, options.graceMs);
      const to = refusal.real_ms + (retryAfterDelay(refusal) ?? options.quietMs);
      // Only requests sent as reactions (from `from` on) count towards the storm, not the ones that were
      // in flight; the peak is looked for at the requests that followed the 429.
      const worst = parallelism(from, to, i);
      if (worst.count > options.maxConcurrencyAfter429) {
        // The first requests, in list order, that arrived while it was in force.
        const stormFrom = firstWhere(arrivals.length, (k) => arrival(k) >= from);
        const stormEnd = firstWhere(arrivals.length, (k) => !(arrival(k) < to));
        const storm = firstPositions(arrivals.slice(stormFrom, Math.max(stormFrom, stormEnd)), 8).map(
          (k) => entries[k] as JournalEntry,
        );
        findings.push({
          message: `${worst.count} requests were in flight at once (at #${(entries[worst.position] as JournalEntry).seq}) while the 429 of ${describe(refusal)} was in force (at most ${options.maxConcurrencyAfter429})`,
          requests: [refusal, ...storm],
        });
      }
    });
    return findings;
  },
};
