/*
 * Retries sent without any wait (backoff-with-jitter's "no wait at all", spec section 7: after a 429
 * without Retry-After and after a 5xx alike, a client backs off). A zero-delay retry measures as scheduling
 * noise, tens of milliseconds on a loaded machine, never a backoff step; a backoff's first step is taken to
 * be at least FIRST_STEP_MS, doubling per retry, and full jitter (the most spread) waits NO_WAIT_MS or less
 * at the k-th retry of a chain with a chance of at most NO_WAIT_MS / (FIRST_STEP_MS x 2^(k-1)).
 */

/**
 * Retries that never wait longer than this did not back off at all: a zero-delay retry measures as
 * scheduling noise, which is tens of milliseconds on a loaded machine, never a backoff step.
 */
export const NO_WAIT_MS = 50;
/** The smallest first step of a backoff a client could mean (exponential-backoff's default is 100 ms). */
export const FIRST_STEP_MS = 100;
/** How unlikely quick retries must be for a client that backs off before they are taken as no wait at all. */
export const NO_WAIT_CHANCE = 0.0001;

/**
 * The chance that a client backing off (first step FIRST_STEP_MS or more, doubling, full jitter) sends at
 * least `quick` of its retries within NO_WAIT_MS, given each retry's place in its chain (1 for a first
 * retry): the tail of the sum of independent chances NO_WAIT_MS / (FIRST_STEP_MS x 2^(k-1)).
 */
export function chanceOfQuickRetries(places: readonly number[], quick: number): number {
  // probability[j]: chance that exactly j retries so far were quick, for j < quick; `tail` for quick or more.
  let probability = new Float64Array(quick + 1);
  probability[0] = 1;
  for (const place of places) {
    const p = Math.min(1, NO_WAIT_MS / (FIRST_STEP_MS * 2 ** (place - 1)));
    const next = new Float64Array(quick + 1);
    for (let j = 0; j <= quick; j++) {
      const here = probability[j] as number;
      if (here === 0) continue;
      if (j === quick) next[j] = (next[j] as number) + here;
      else {
        next[j] = (next[j] as number) + here * (1 - p);
        next[j + 1] = (next[j + 1] as number) + here * p;
      }
    }
    probability = next;
  }
  return probability[quick] as number;
}

/**
 * The chance of so many quick retries for a client backing off, over all its retries and over its retries at
 * each place in their chains (a client whose first retry never waits and whose later ones do, as urllib3's
 * Retry, shows it at place 1 only): the least of those chances times their number (each is one test).
 */
export function chanceOfQuickRetriesAnywhere(
  places: readonly number[],
  quick: readonly { place: number }[],
): number {
  const tests = [chanceOfQuickRetries(places, quick.length)];
  for (const place of new Set(places)) {
    const here = places.filter((p) => p === place);
    const quickHere = quick.filter((q) => q.place === place).length;
    if (quickHere > 0) tests.push(chanceOfQuickRetries(here, quickHere));
  }
  return Math.min(1, Math.min(...tests) * tests.length);
}
