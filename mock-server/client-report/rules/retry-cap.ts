import type { JournalEntry } from '../../journal.ts';
import { describe, isFailure, TOGETHER_MS } from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const retryCap: ClientRule = {
  id: 'retry-cap',
  title: 'Retry loops have a hard cap: never more consecutive failed attempts of one request than the cap',
  specRef: '§7 (retry loops must have a hard cap)',
  judge({ entries, options }) {
    const findings: Finding[] = [];
    // Per request fingerprint: the failed entries of the current streak, and the start of each attempt.
    const streaks = new Map<string, { entries: JournalEntry[]; attempts: number[] }>();
    for (const e of entries) {
      if (!e.request_fingerprint) continue;
      if (!isFailure(e)) {
        streaks.delete(e.request_fingerprint);
        continue;
      }
      const streak = streaks.get(e.request_fingerprint) ?? { entries: [], attempts: [] };
      streaks.set(e.request_fingerprint, streak);
      streak.entries.push(e);
      const lastAttempt = streak.attempts.at(-1);
      if (lastAttempt !== undefined && e.real_ms - lastAttempt <= TOGETHER_MS) continue;
      streak.attempts.push(e.real_ms);
      if (streak.attempts.length === options.retryCap + 1) {
        findings.push({
          message: `${describe(streak.entries[0] as JournalEntry)} was attempted ${streak.attempts.length} times in a row without success (cap ${options.retryCap}); stop after the cap and report the failure`,
          requests: streak.entries.slice(0, 12),
        });
      }
    }
    return findings;
  },
};
