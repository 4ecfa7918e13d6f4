import type { JournalEntry } from '../../journal.ts';
import {
  createReactionFacts,
  describe,
  entriesByGatewayTime,
  honouringOwnRetryAfter,
  retryAfterUntil,
  scopeOf,
  TOLERANCE_MS,
} from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

export const honorRetryAfter: ClientRule = {
  id: 'honor-retry-after',
  title: 'No request in the scope of a 429 (or a 5xx) before its Retry-After has elapsed',
  specRef: '§7 (429: honor Retry-After), §8',
  judge({ entries, rateLimitRules, options }) {
    const findings: Finding[] = [];
    // A retry that waited out its own Retry-After honours it (per-request tracking, as in ky or undici).
    const honouring = honouringOwnRetryAfter(entries);
    const honours = entries.map((e) => honouring.has(e));
    const facts = createReactionFacts(entries);
    const startedBefore = entriesByGatewayTime(entries);
    // Early requests already reported: refused in turn, they belong to the same violation, not a new one.
    // Marked by seq: the first position holding a seq stands for it.
    const firstWithSeq = new Map<number, number>();
    const seqAt = entries.map((e, k) => {
      if (!firstWithSeq.has(e.seq)) firstWithSeq.set(e.seq, k);
      return firstWithSeq.get(e.seq) as number;
    });
    const reported = new Uint8Array(entries.length);
    entries.forEach((refusal, i) => {
      if (reported[seqAt[i] as number]) return;
      const until = retryAfterUntil(refusal);
      if (until === undefined || !(refusal.status === 429 || refusal.status >= 500)) return;
      const inScope = scopeOf(refusal, rateLimitRules);
      // The requests in its scope sent before its Retry-After had elapsed: how many, and the first few.
      let early = 0;
      const shown: JournalEntry[] = [];
      startedBefore(i, until - TOLERANCE_MS, (k) => {
        const e = entries[k] as JournalEntry;
        // Each early request is one violation, however many concurrent 429s it jumped.
        if (reported[seqAt[k] as number]) return;
        // Only reactions count: a request already on its way when the refusal was answered could not obey it.
        if (!(inScope(e) && !honours[k] && facts.isReaction(e, refusal, options.graceMs))) return;
        early++;
        if (shown.length < 5) shown.push(e);
        reported[seqAt[k] as number] = 1;
      });
      const first = shown[0];
      if (!first) return;
      findings.push({
        message:
          `${describe(first)} was sent ${((until - first.at) / 1000).toFixed(1)} s before the Retry-After ("${refusal.retry_after}") of ${describe(refusal)} had elapsed` +
          (early > 1 ? `, and ${early - 1} more` : ''),
        requests: [refusal, ...shown],
      });
    });
    return findings;
  },
};
