import type { JournalEntry } from '../../journal.ts';
import { describe } from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const noRetryOnAccessDenied: ClientRule = {
  id: 'no-retry-on-access-denied',
  title: 'A call refused with 403 access_denied is not repeated blindly: request access instead',
  specRef: '§5 rule 4, §7 (403: request early access or verification)',
  judge({ entries }) {
    const denied = new Map<string, JournalEntry>();
    const repeats = new Map<string, JournalEntry[]>();
    for (const e of entries) {
      const first = denied.get(e.operation);
      if (e.code === 'access_denied') {
        if (first) repeats.set(e.operation, [...(repeats.get(e.operation) ?? []), e]);
        else denied.set(e.operation, e);
      } else if (e.status >= 200 && e.status < 300) {
        // Access was granted meanwhile (tier or allowlist changed): a later 403 starts afresh.
        denied.delete(e.operation);
      }
    }
    return [...repeats].map(([operation, again]): Finding => {
      const first = again[0] as JournalEntry;
      return {
        message: `${operation} was denied (403 access_denied) and then called again ${again.length} time(s), first by ${describe(first)}, with nothing changed`,
        requests: [
          ...entries.filter((e) => e.operation === operation && e.code === 'access_denied').slice(0, 6),
        ],
      };
    });
  },
};
