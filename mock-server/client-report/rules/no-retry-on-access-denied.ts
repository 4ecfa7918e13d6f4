import type { JournalEntry } from '../../journal/journal.ts';
import { addToGroup, createReactionFacts, describe } from '../journal-facts.ts';
import { resentInference } from '../rule-readings/reaction-why.ts';
import { undecidedAcceptsDecided } from '../rule-readings/undecided-accepts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const noRetryOnAccessDenied: ClientRule = {
  id: 'no-retry-on-access-denied',
  title: 'A call refused with 403 access_denied is not repeated blindly: request access instead',
  specRef: [
    { section: 5, rules: [4] },
    { section: 7, note: '403: request early access or verification' },
  ],
  unobserved: (ctx) => undecidedAcceptsDecided(noRetryOnAccessDenied.judge, ctx),
  judge({ entries }) {
    const facts = createReactionFacts(entries);
    const denied = new Map<string, JournalEntry>();
    const repeats = new Map<string, JournalEntry[]>();
    // The denial each operation's first repeat came after (a later grant may end `denied`'s entry).
    const deniedFirst = new Map<string, JournalEntry>();
    // Per operation, the first few of all its 403 access_denied answers, to show.
    const shown = new Map<string, JournalEntry[]>();
    for (const e of entries) {
      const first = denied.get(e.operation);
      if (e.code === 'access_denied') {
        // A call on its way before the first denial was answered (in flight with it) is not a repeat.
        if (first) {
          if (facts.isReaction(e, first, 0)) {
            if (!repeats.has(e.operation)) deniedFirst.set(e.operation, first);
            addToGroup(repeats, e.operation, e);
          }
        } else denied.set(e.operation, e);
        if ((shown.get(e.operation)?.length ?? 0) < 6) addToGroup(shown, e.operation, e);
      } else if (e.status >= 200 && e.status < 300) {
        // Access was granted meanwhile (tier or allowlist changed): a later 403 starts afresh.
        denied.delete(e.operation);
      }
    }
    return [...repeats].map(([operation, again]): Finding => {
      const first = again[0] as JournalEntry;
      return {
        message: `${operation} was denied (403 access_denied) and then called again ${again.length} time(s), first by ${describe(first)}, with nothing changed`,
        requests: [...(shown.get(operation) ?? [])],
        ...resentInference(first, deniedFirst.get(operation) as JournalEntry, 'denial'),
      };
    });
  },
};
