import type { JournalEntry } from '../../journal.ts';
import {
  answeredAt,
  createReactionFacts,
  describe,
  honouringOwnRetryAfter,
  parallelismPeaks,
  retryAfterDelay,
} from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const noParallelStorm: ClientRule = {
  id: 'no-parallel-storm',
  title: 'After a 429, concurrency is reduced: no parallel storm while the limit is in force',
  specRef: '§7 (429: reduce concurrency)',
  judge({ entries, options }) {
    const findings: Finding[] = [];
    // Retries that waited out their own Retry-After are not part of a storm.
    const honouring = honouringOwnRetryAfter(entries);
    const parallelism = parallelismPeaks(entries);
    const facts = createReactionFacts(entries);
    entries.forEach((refusal, i) => {
      if (refusal.status !== 429) return;
      // Only reactions to the 429 count towards the storm, not the requests already on their way; none can
      // arrive before it was answered. The peak is looked for at the requests that followed the 429.
      const to = refusal.real_ms + (retryAfterDelay(refusal) ?? options.quietMs);
      const worst = parallelism(
        answeredAt(refusal),
        to,
        i,
        (e) => !honouring.has(e) && facts.isReaction(e, refusal, options.graceMs),
      );
      if (worst.count > options.maxConcurrencyAfter429) {
        // The first of them in list order.
        const storm = [...worst.members]
          .sort((a, b) => a - b)
          .slice(0, 8)
          .map((k) => entries[k] as JournalEntry);
        findings.push({
          message: `${worst.count} requests were in flight at once (at #${(entries[worst.position] as JournalEntry).seq}) while the 429 of ${describe(refusal)} was in force (at most ${options.maxConcurrencyAfter429})`,
          requests: [refusal, ...storm],
        });
      }
    });
    return findings;
  },
};
