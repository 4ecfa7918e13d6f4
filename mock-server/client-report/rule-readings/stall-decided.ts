import type { JournalEntry } from '../../journal/journal.ts';
import type { ClientRule, RuleContext } from '../types.ts';

/*
 * Green means seen, for the rules that tell a reaction from a request already on its way (honor-retry-after,
 * no-parallel-storm). A request on an idle connection read after the gateway's event loop stalled may have
 * been waiting since before the refusal's answer (a batch's tail) or sent with it in hand (a storm): the
 * stall took the time that would tell them apart, and the rules then read it as on its way (a miss, never a
 * false flag). When that reading alone kept a rule from failing (read as if the loop had not stalled, the
 * same journal breaks it), the rule could not observe whether it was kept: NOT OBSERVED, never a pass.
 */

/** The journal as a gateway that noted no stall would have it; undefined when none was noted. */
function withoutStalls(entries: readonly JournalEntry[]): JournalEntry[] | undefined {
  if (!entries.some((e) => e.stall_runs !== undefined)) return undefined;
  return entries.map(({ stall_runs: _, ...e }) => e as JournalEntry);
}

/**
 * Why `judge` could not observe whether its rule was kept: it finds nothing, and read without the stalls it
 * finds a violation. Undefined when the stalls decided nothing (or it found a violation all the same).
 */
export function stallsDecided(judge: ClientRule['judge'], ctx: RuleContext): string | undefined {
  const bare = withoutStalls(ctx.entries);
  if (!bare || judge(ctx).length > 0) return undefined;
  const found = judge({ ...ctx, entries: bare });
  if (found.length === 0) return undefined;
  const seqs = [...new Set(found.flatMap((f) => f.requests.map((e) => e.seq)))].sort((a, b) => a - b);
  const shown = seqs.slice(0, 6).map((seq) => `#${seq}`);
  return `requests after a refusal (${shown.join(', ')}${seqs.length > 6 ? ', ...' : ''}) were read only after the gateway's event loop stalling: whether they were sent before its answer or with it in hand cannot be told; run it again on a quieter machine`;
}
