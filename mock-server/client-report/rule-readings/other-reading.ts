import type { ClientRule, RuleContext } from '../types.ts';

/*
 * Green means seen, one mechanism for every reading that may hide a violation (stall-decided.ts: the loop's
 * stalls; undecided-accepts.ts: a connection accepted at the first poll after a lone answer). A rule that
 * finds nothing in the journal as the report reads it, but finds a violation in the same journal read the
 * other way, could not observe whether it was kept: NOT OBSERVED, never a pass.
 */

/** What a reading found that the journal as read did not: the requests it names, and its first message. */
export interface FoundOnlyThere {
  /** The requests, as `#seq` (at most six, then `...`). */
  requests: string;
  message: string | undefined;
}

/**
 * What `judge` finds in the first of `readings` (the same journal's entries read another way) that breaks
 * the rule, when the journal as it is breaks none. Undefined when the journal breaks it already, or no
 * reading does. Readings are made one at a time, only when needed.
 */
export function foundOnlyInReading(
  judge: ClientRule['judge'],
  ctx: RuleContext,
  readings: Iterable<RuleContext['entries']>,
): FoundOnlyThere | undefined {
  if (judge(ctx).length > 0) return undefined;
  for (const entries of readings) {
    const found = judge({ ...ctx, entries });
    if (found.length === 0) continue;
    const seqs = [...new Set(found.flatMap((f) => f.requests.map((e) => e.seq)))].sort((a, b) => a - b);
    const shown = seqs.slice(0, 6).map((seq) => `#${seq}`);
    return { requests: `${shown.join(', ')}${seqs.length > 6 ? ', ...' : ''}`, message: found[0]?.message };
  }
  return undefined;
}
