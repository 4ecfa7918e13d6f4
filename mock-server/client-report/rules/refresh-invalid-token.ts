import type { JournalEntry } from '../../journal/journal.ts';
import { addToGroup, createReactionFacts, describe } from '../journal-facts.ts';
import { resentInference } from '../rule-readings/reaction-why.ts';
import { undecidedAcceptsDecided } from '../rule-readings/undecided-accepts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const refreshInvalidToken: ClientRule = {
  id: 'refresh-invalid-token',
  title: 'A token answered invalid_identity_token is not sent again: obtain a fresh one',
  specRef: [
    { section: 5, rules: [3] },
    { section: 7, note: '401: obtain fresh token' },
  ],
  judge({ entries }) {
    const facts = createReactionFacts(entries);
    const refused = new Map<string, JournalEntry>();
    const repeats = new Map<string, JournalEntry[]>();
    for (const e of entries) {
      if (!e.token) continue;
      const first = refused.get(e.token);
      // On its way before the refusal was answered (e.g. a parallel batch, however late the gateway got to
      // it): not a repeat.
      if (first && !facts.isReaction(e, first, 0)) continue;
      if (first) addToGroup(repeats, e.token, e);
      else if (e.code === 'invalid_identity_token') refused.set(e.token, e);
    }
    return [...repeats].map(([token, again]): Finding => {
      const first = refused.get(token) as JournalEntry;
      return {
        message: `the token refused by ${describe(first)} was sent again ${again.length} time(s), first by ${describe(again[0] as JournalEntry)}`,
        requests: [first, ...again.slice(0, 5)],
        ...resentInference(again[0] as JournalEntry, first, 'refusal'),
      };
    });
  },
  // A refused token no one named (not signed by the gateway; through the proxy, one the target would not
  // name, on a connection no named agent used) may be this agent's: whether it was resent cannot be seen.
  // Nor whether a copy on a connection accepted at the first poll after a lone refusal was resent.
  unobserved(ctx) {
    const { unattributed = [] } = ctx;
    const refused = unattributed.filter((e) => e.code === 'invalid_identity_token' && e.token !== undefined);
    if (refused.length === 0) return undecidedAcceptsDecided(refreshInvalidToken.judge, ctx);
    return `${refused.length} request(s) refused invalid_identity_token carried a token no agent was named for (not one the gateway signed, or one the target would not name, on a connection no named agent used): if the token was this agent's, whether it sent it again could not be seen`;
  },
};
