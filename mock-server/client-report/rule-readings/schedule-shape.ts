/*
 * The shape of a retry schedule, read so that load cannot change the verdict.
 *
 * What load does to a wait the gateway measures (a retry's arrival minus the failure's answer): it adds to it,
 * never takes away, by a few milliseconds on a quiet machine and tens of them on a loaded one (21 ms measured
 * on the shared 2-core machine). So nothing here compares waits to within a few milliseconds. What it reads
 * instead, each as the chance that a client that does back off with jitter would have shown it:
 * - spread: waits a schedule meant alike (the k-th waits of several calls, or the waits past a cap) spread
 *   over less than a jittering client spreads them. A client that jitters spreads a wait over at least
 *   LEAST_JITTER_FRACTION of it or LEAST_JITTER_MS, whichever is less (axios-retry adds 0-20% of the wait,
 *   got 0-100 ms to waits of a second and more; full and equal jitter far more); a client without jitter
 *   spreads them only by the noise. Noise widens the spread, so
 *   load can only make a jitter-free client look jittered (a miss, told by the count of its sequences), never
 *   the other way round (a false flag).
 *   A load spike lengthens a few waits by hundreds of milliseconds: each group is also read without its one
 *   or two longest waits (each reading one more test, counted).
 * Whether a schedule grows at all (a floor never passed) is read by schedule-growth.ts.
 */

/** The least jitter a client that jitters spreads one wait over: 20% of it or 100 ms, whichever is less. */
export const LEAST_JITTER_FRACTION = 0.2;
export const LEAST_JITTER_MS = 100;
/** How unlikely a spread must be for a jittering client before the schedule is taken as having none. */
export const NO_JITTER_CHANCE = 0.001;
/** The width of the least jitter on a wait of `wait` ms. */
export const leastJitter = (wait: number) => Math.min(LEAST_JITTER_MS, LEAST_JITTER_FRACTION * wait);

/**
 * The chance that `n` values drawn uniformly over a span have their `m` smallest within `ratio` of it (all
 * `n` by default: their range): the m-th smallest minus the smallest is Beta(m-1, n-m+2), so the chance is
 * that of m-1 or more of n draws at most `ratio` (a binomial tail). For m = n: n r^(n-1) - (n-1) r^n.
 *
 * @example
 * chanceOfRange(8, 0.21); // 0.000118: eight waits jittered over 100 ms spread 21 ms or less
 */
export function chanceOfRange(n: number, ratio: number, m = n): number {
  if (n < 2 || m < 2 || !(ratio < 1)) return 1;
  const r = Math.max(0, ratio);
  // P(Binomial(n, r) >= m - 1).
  let chance = 0;
  let term = (1 - r) ** n; // P(X = 0)
  for (let k = 0; k <= n; k++) {
    if (k >= m - 1) chance += term;
    term = r === 1 ? 0 : (term * (n - k) * r) / ((k + 1) * (1 - r));
  }
  return Math.min(1, chance);
}

/** Range and least of some waits. */
export function spreadOf(waits: readonly number[]): { least: number; spread: number } {
  let least = Number.POSITIVE_INFINITY;
  let most = Number.NEGATIVE_INFINITY;
  for (const w of waits) {
    if (w < least) least = w;
    if (w > most) most = w;
  }
  return { least, spread: most - least };
}

// Waits of a group a load spike may have lengthened, left out of its spread (each count is one more test).
const MOST_SPIKED = 2;

/**
 * The chance that a client jittering by at least `leastJitter` spreads one group of waits (waits its
 * schedule meant alike) as little as they are, however a load spike lengthened one or two of them: the
 * spread of all of them, then of all but the longest one or two (chanceOfRange of the m smallest); the least
 * of those chances times the tests made. Load spikes hit a few waits by hundreds of milliseconds, not all.
 */
export function chanceOfGroupSpread(waits: readonly number[]): number {
  if (waits.length < 2 || !waits.every(Number.isFinite)) return 1;
  const sorted = [...waits].sort((a, b) => a - b);
  const least = sorted[0] as number;
  const jitter = leastJitter(Math.max(0, least));
  if (!(jitter > 0)) return 1;
  let best = 1;
  let tests = 0;
  for (let spiked = 0; spiked <= MOST_SPIKED && sorted.length - spiked >= 3; spiked++) {
    const m = sorted.length - spiked;
    best = Math.min(best, chanceOfRange(sorted.length, ((sorted[m - 1] as number) - least) / jitter, m));
    tests++;
  }
  return Math.min(1, best * Math.max(1, tests));
}

/**
 * The chance that a client jittering by at least `leastJitter` spreads each group of waits as little as
 * they are (chanceOfGroupSpread). The groups are independent (each wait is jittered anew) and combined as
 * Fisher's method does: the chance that a product of k such chances is as small, t x (1 + L + L^2/2! + ...
 * + L^(k-1)/(k-1)!) with L = -ln t.
 */
export function chanceOfSpread(groups: readonly (readonly number[])[]): number {
  return combined(groups.map(chanceOfGroupSpread));
}

/** Fisher's combination of independent chances (see chanceOfSpread); 1 for none. */
export function combined(chances: readonly number[]): number {
  if (chances.length === 0) return 1;
  const product = chances.reduce((a, b) => a * b, 1);
  if (product <= 0) return 0;
  const l = -Math.log(product);
  let term = 1;
  let sum = 1;
  for (let j = 1; j < chances.length; j++) {
    term *= l / j;
    sum += term;
  }
  return Math.min(1, product * sum);
}

/**
 * Waits past a cap, without jitter: the longest run of 4 or more waits at the end of a chain (after it grew,
 * or from its start) whose spread a jittering client would show with chance under NO_JITTER_CHANCE. urllib3's
 * `backoff_max` gives 0, 200, then 400 ms again and again: a fixed-interval loop once the cap is reached.
 */
export function fixedTail(
  intervals: readonly number[],
): { retries: number; least: number; spread: number; chance: number } | undefined {
  for (let retries = intervals.length; retries >= 4; retries--) {
    const tail = intervals.slice(intervals.length - retries);
    const chance = chanceOfSpread([tail]);
    if (chance < NO_JITTER_CHANCE) return { retries, ...spreadOf(tail), chance };
  }
  return undefined;
}

/** A chance as words: `1 in 1234`, or `under 1 in a million`. */
export const chanceText = (chance: number) =>
  chance < 1e-6 ? 'under 1 in a million' : `1 in ${Math.round(1 / chance)}`;
