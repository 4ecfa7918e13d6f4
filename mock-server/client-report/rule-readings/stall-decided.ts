import { asIfUnstalled } from '../facts/causality.ts';
import type { ClientRule, RuleContext } from '../types.ts';
import { foundOnlyInReading } from './other-reading.ts';

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
  if (!ctx.entries.some((e) => e.stall_runs !== undefined)) return undefined;
  // Each wait as the least the client may have meant, then as flat as the stalls allow.
  function* readings() {
    for (const reading of ['net', 'flattest'] as const)
      yield asIfUnstalled(ctx.entries, reading) as typeof ctx.entries;
  }
  const found = foundOnlyInReading(judge, ctx, readings());
  if (found === undefined) return undefined;
  return `read as if the gateway's event loop had not stalled (no stall excusing a request, each wait as short or as flat as the stalls allow), requests ${found.requests} would break it (${found.message}); read only after the gateway's event loop stalling, whether they were sent before an answer or with it in hand, early or late, cannot be told; run it again on a quieter machine`;
}
