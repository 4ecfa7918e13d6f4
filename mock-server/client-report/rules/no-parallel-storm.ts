import {
  describe,
  honoursOwnRetryAfter,
  parallelismAt,
  reactionsFrom,
  retryAfterDelay,
} from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const noParallelStorm: ClientRule = {
  id: 'no-parallel-storm',
  title: 'After a 429, concurrency is reduced: no parallel storm while the limit is in force',
  specRef: '§7 (429: reduce concurrency)',
  judge({ entries, options }) {
    const findings: Finding[] = [];
    entries.forEach((refusal, i) => {
      if (refusal.status !== 429) return;
      const from = reactionsFrom(refusal, options.graceMs);
      const to = refusal.real_ms + (retryAfterDelay(refusal) ?? options.quietMs);
      let worst = { count: 0, at: -1 };
      entries.slice(i + 1).forEach((e) => {
        if (e.real_ms < from || e.real_ms >= to || honoursOwnRetryAfter(entries, e)) return;
        // Only requests sent as reactions count towards the storm (not the ones that were in flight).
        // Retries that waited out their own Retry-After are not part of a storm.
        const count = parallelismAt(
          entries.filter((x) => x.real_ms >= from && !honoursOwnRetryAfter(entries, x)),
          e,
        );
        if (count > worst.count) worst = { count, at: e.seq };
      });
      if (worst.count > options.maxConcurrencyAfter429) {
        const storm = entries.filter((e) => e.real_ms >= from && e.real_ms < to).slice(0, 8);
        findings.push({
          message: `${worst.count} requests were in flight at once (at #${worst.at}) while the 429 of ${describe(refusal)} was in force (at most ${options.maxConcurrencyAfter429})`,
          requests: [refusal, ...storm],
        });
      }
    });
    return findings;
  },
};
