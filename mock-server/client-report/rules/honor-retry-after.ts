import {
  describe,
  honoursOwnRetryAfter,
  reactionsFrom,
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
    // Early requests already reported: refused in turn, they belong to the same violation, not a new one.
    const reported = new Set<number>();
    entries.forEach((refusal, i) => {
      if (reported.has(refusal.seq)) return;
      const until = retryAfterUntil(refusal);
      if (until === undefined || !(refusal.status === 429 || refusal.status >= 500)) return;
      const inScope = scopeOf(refusal, rateLimitRules);
      const reactedAfter = reactionsFrom(refusal, options.graceMs);
      const early = entries.slice(i + 1).filter(
        (e) =>
          e.at < until - TOLERANCE_MS &&
          e.real_ms >= reactedAfter &&
          inScope(e) &&
          // A retry that waited out its own Retry-After honours it (per-request tracking, as in ky or undici).
          !honoursOwnRetryAfter(entries, e),
      );
      const first = early[0];
      if (!first) return;
      for (const e of early) reported.add(e.seq);
      findings.push({
        message:
          `${describe(first)} was sent ${((until - first.at) / 1000).toFixed(1)} s before the Retry-After ("${refusal.retry_after}") of ${describe(refusal)} had elapsed` +
          (early.length > 1 ? `, and ${early.length - 1} more` : ''),
        requests: [refusal, ...early.slice(0, 5)],
      });
    });
    return findings;
  },
};
