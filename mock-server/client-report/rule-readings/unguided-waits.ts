import type { JournalEntry } from '../../journal/journal.ts';
import { intervalsOf, isFailure, retryChains, waitFloorsOf } from '../journal-facts.ts';
import { failureClassOf } from './failure-class.ts';
import { NO_WAIT_MS } from './quick-retries.ts';

/*
 * The retry chains backoff-with-jitter judges (a client's own backoff, with no Retry-After to follow), and
 * when the machine's stalls leave their waits unreadable: the rule is then NOT OBSERVED, never a pass.
 */

// Retries after a failure the gateway gave no Retry-After for: the client's own backoff is judged.
// Health is polled, not retried (see backoff-with-jitter.ts): its requests make no chain.
export const unguided = (e: JournalEntry) =>
  isFailure(e) && e.retry_after === undefined && e.operation !== 'health';
// Waits of one chain this close are "the same": 5 ms or 5%, whichever is larger (scheduling noise grows
// with the wait).
export const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(5, 0.05 * Math.max(a, b));
// Waits the gateway's loop was not held up during (net of its stalls, the same): a client timer due in a
// stall fires when it ends, so waits that fell in stalls come out alike whatever the client meant, and
// parallel calls' timers fire together. Sameness (identical intervals, a fixed tail, lock-step) is read of
// steady waits only.
export const steady = (intervals: readonly number[], floors: readonly number[]) =>
  intervals.every((d, k) => same(floors[k] as number, d));
/**
 * Sequences alike one base that make a fixed schedule (lock-step), at least; as many steady sequences are
 * needed to read jitter at all (backoff-with-jitter's `lockStep`).
 */
export const LOCK_STEP_SEQUENCES = 4;

/**
 * Why the retries' waits could not be read, when the machine's stalls took them (`waitFloorsOf`: the gateway's
 * loop stalled for half or more of a wait or longer, by the stalls it saw): at least half of all the waits
 * (and one at least), or, in at least half of the chains long enough to show growth (three retries or more),
 * both of the first two waits, the base every growth reading compares the later ones with. Such a wait says
 * nothing of what the client meant (a fixed 250 ms sleep and a backoff from 100 ms both read as "the
 * machine"; a flat schedule whose first waits a stall lengthened reads as shrinking, not as flat), so a
 * journal of them is no pass: the rule is not observed.
 */
export function waitsUnseen(entries: readonly JournalEntry[]): string | undefined {
  let waits = 0;
  let unseen = 0;
  let lost = 0;
  let measured = 0;
  let long = 0;
  let baseUnseen = 0;
  for (const chain of retryChains(entries, unguided)) {
    const floors = waitFloorsOf(chain);
    const machineTook = intervalsOf(chain).map((wait, k) => {
      waits++;
      const machine = wait - (floors[k] as number);
      if (wait <= NO_WAIT_MS || machine < wait / 2) return false;
      unseen++;
      lost += machine;
      measured += wait;
      return true;
    });
    if (machineTook.length < 3) continue;
    long++;
    if (machineTook[0] && machineTook[1]) baseUnseen++;
  }
  const stalls = `${Math.round(lost)} of ${Math.round(measured)} ms`;
  if (unseen > 0 && unseen * 2 >= waits)
    return `${unseen} of the ${waits} waits between a failure and its retry were mostly the gateway's event loop stalling (${stalls}): what the client meant to wait cannot be read from them; run it again on a quieter machine`;
  if (baseUnseen > 0 && baseUnseen * 2 >= long)
    return `in ${baseUnseen} of the ${long} retry chains of three retries or more, the first two waits (the base the later ones are read against) were mostly the gateway's event loop stalling (${stalls} in all): whether the waits grew cannot be read from them; run it again on a quieter machine`;
  return undefined;
}

/**
 * Why a lack of jitter could not be read: of the '429' chains of three retries or more, enough to compare
 * (LOCK_STEP_SEQUENCES), fewer than that had waits no stall lengthened (`steady`). Lock-step and spread are
 * read of steady waits only, since stalls spread waits as jitter does (a fixed 0, 200, 400 ms schedule whose
 * waits the loop stalled reads as jittered), so such a journal is no pass for jitter: not observed.
 */
export function jitterUnseen(entries: readonly JournalEntry[]): string | undefined {
  let long = 0;
  let steadyOnes = 0;
  for (const chain of retryChains(entries, unguided)) {
    const intervals = intervalsOf(chain);
    if (intervals.length < 3 || failureClassOf(chain) !== '429') continue;
    long++;
    if (steady(intervals, waitFloorsOf(chain))) steadyOnes++;
  }
  if (long < LOCK_STEP_SEQUENCES || steadyOnes >= LOCK_STEP_SEQUENCES) return undefined;
  return `only ${steadyOnes} of the ${long} retry sequences after 429s had waits free of the gateway's event loop stalling (${LOCK_STEP_SEQUENCES} needed to compare): whether they were jittered or kept one schedule cannot be read, since stalls spread waits as jitter does; run it again on a quieter machine`;
}
