import { asIfUnstalled } from '../facts/causality.ts';
import type { ClientRule, RuleContext } from '../types.ts';

/*
 * Green means seen, both ways round, for every rule that reads time between an answer and a later request
 * (honor-retry-after, no-parallel-storm, backoff-with-jitter). The gateway's event loop stalling moves
 * time: a request on an idle connection read after a stall may have been waiting since before a refusal's
 * answer (a batch's tail) or sent with it in hand (a storm), and a client's timer due in a stall fires when
 * it ends, so an early retry may measure as late and a flat schedule as grown. The rules read what the
 * journal shows, stalls excusing what they may (a miss, never a false flag). When that reading alone kept a
 * rule from failing (read as if the loop had not stalled, `asIfUnstalled`, the same journal breaks it), the
 * rule could not observe whether it was kept: NOT OBSERVED, never a pass.
 */

/**
 * Why `judge` could not observe whether its rule was kept: it finds nothing, and read as if the loop had
 * not stalled it finds a violation. Undefined when the stalls decided nothing (or it found a violation all
 * the same).
 */
export function stallsDecided(judge: ClientRule['judge'], ctx: RuleContext): string | undefined {
  if (!ctx.entries.some((e) => e.stall_runs !== undefined) || judge(ctx).length > 0) return undefined;
  // Each wait as the least the client may have meant, then as flat as the stalls allow.
  const readings = ['net', 'flattest'] as const;
  let found: ReturnType<ClientRule['judge']> = [];
  for (const reading of readings) {
    found = judge({ ...ctx, entries: asIfUnstalled(ctx.entries, reading) as typeof ctx.entries });
    if (found.length > 0) break;
  }
  if (found.length === 0) return undefined;
  const seqs = [...new Set(found.flatMap((f) => f.requests.map((e) => e.seq)))].sort((a, b) => a - b);
  const shown = seqs.slice(0, 6).map((seq) => `#${seq}`);
  return `read as if the gateway's event loop had not stalled (no stall excusing a request, each wait as short or as flat as the stalls allow), requests ${shown.join(', ')}${seqs.length > 6 ? ', ...' : ''} would break it (${found[0]?.message}); read only after the gateway's event loop stalling, whether they were sent before an answer or with it in hand, early or late, cannot be told; run it again on a quieter machine`;
}
