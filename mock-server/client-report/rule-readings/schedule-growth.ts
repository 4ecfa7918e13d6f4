/*
 * Whether a retry schedule grows: the test behind backoff-with-jitter's "the waits never grow" (spec section 7:
 * 429 "exponential backoff with jitter", 5xx "retry with backoff"; the spec gives no step and no cap).
 *
 * What "backs off" means here: the bound of the waits grows from the first retries to the later ones, by at
 * least one doubling, whatever its first step and whatever its cap. The first retries are a chain's first and
 * second (an exponential backoff's bounds f and 2f), the later ones its third and on (4f, or the cap). A
 * schedule whose bound never grows (a constant bound, however jittered) does not back off; nor does one capped
 * at its second step (0-100 ms, then 0-200 ms for ever), which holds one bound from its second retry on.
 * Most common real way to break it: a jittered constant wait (`sleep(random() * 100)` between retries), or a
 * backoff whose cap is so low it is reached at once (full jitter capped at 100 ms).
 * Most unusual legal way to keep it: a short first step and a low cap (equal jitter from 40 ms doubling to a
 * 200 ms cap: 20-40, 40-80, 80-160, then 100-200 ms for ever); the old test (a reference capped at 1 s or more)
 * flagged it or not depending on its own draws. No absolute number is assumed here: the test is scale-free.
 *
 * The reference: the least-growing legal backoff, full jitter (the most spread, so the one most likely to look
 * flat), bound f at the first retry, 2f at the second, 4f from the third on, for any f. Scaled by its bound
 * (wait / 1, / 2, / 4 at those places) each of its waits is uniform on 0..f, all alike. The statistic is the
 * ratio t of the later waits' largest (scaled) to the first retries' largest; its chance under the reference is
 * exact and free of f: with X the largest of nE uniforms and Y the largest of nL, P(Y <= tX) =
 * t^nL nE / (nE + nL). A schedule that grows less than the reference shows a small t (a constant bound: the
 * later waits scaled by 1/4 stay under a quarter of the first ones), one that grows more a large t.
 *
 * Load only lengthens waits. A spike (hundreds of ms) on a later wait hides a flat schedule (a miss, never a
 * false flag): the later waits are also read without their longest one or two (each reading one more test,
 * counted). A spike on a first retry's wait would fake a flat schedule: the first retries are ALWAYS read
 * without their longest EARLY_SPIKES waits (the law of that order statistic is exact too: Beta). Steady load
 * (tens of ms) adds to every wait alike, which after scaling weighs more on the first retries; it matters
 * only for a first step as short as the load, whose waits are mostly load.
 *
 * Its limit: scale-free, fifteen waits do not always tell. Three calls of five retries on a constant 100 ms
 * bound whose three first waits all fell under 60 ms look like the reference with f = 60 ms (chance about
 * 1 in 500); no scale-free reading can flag them without flagging that legal backoff as often. So a second
 * reading, `lowCeiling`, holds the same reference to the least common first step (FIRST_STEP_MS, 100 ms:
 * bounds 100, 200, then 400 ms): every wait but one or two (spikes) under a ceiling it passes with a chance
 * under 1 in 1000. This one assumes a scale: a backoff from under 100 ms whose waits stay under 400 ms (40 ms
 * doubling to a 200 ms step, three calls of seven retries) reads as a low ceiling. One such call (seven
 * retries) never does: from its fourth retry on it waits 100 ms or more, and a ceiling of 100 ms over its
 * seven places has a chance of 1 in 2048 at the least, times the three tests made.
 */

/** Waits of the first retries a load spike may have lengthened: always left out of their largest. */
export const EARLY_SPIKES = 2;
/** Waits of the later retries a load spike may have lengthened: each count left out is one more test. */
export const LATE_SPIKES = 2;
/** The least number of first-retry and of later-retry waits the test reads. */
export const LEAST_WAITS = 3;

/** The reference's bound at a retry's place (1 for a first retry), in units of its first step. */
export const referenceBound = (place: number) => 2 ** Math.min(Math.max(place, 1) - 1, 2);

/** E[X^r] for X ~ Beta(a, b). */
function betaMoment(a: number, b: number, r: number): number {
  let moment = 1;
  for (let s = 0; s < r; s++) moment *= (a + s) / (a + b + s);
  return moment;
}

const choose = (n: number, k: number) => {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
};

/**
 * The chance, for nE + nL values drawn alike (uniform on 0..1), that at most `above` of the nL later ones
 * exceed t times the (1 + early)-th largest of the nE first ones: X, that order statistic, is Beta(nE - early,
 * early + 1), and given X each later value exceeds tX with chance 1 - tX, so the chance is
 * sum over i <= above of C(nL, i) E[(tX)^(nL-i) (1 - tX)^i].
 *
 * @example
 * chanceOfFlat(6, 9, 0.3, 0, 0); // 0.3^9 x 6/15 = 7.9e-6
 */
export function chanceOfFlat(nE: number, nL: number, t: number, early: number, above: number): number {
  if (!(t < 1)) return 1;
  if (nE <= early || nL <= above) return 1;
  const tt = Math.max(0, t);
  const a = nE - early;
  const b = early + 1;
  let chance = 0;
  for (let i = 0; i <= above; i++) {
    // (1 - tX)^i expanded: sum over m of C(i, m) (-tX)^m.
    for (let m = 0; m <= i; m++) {
      const power = nL - i + m;
      chance += choose(nL, i) * choose(i, m) * (-1) ** m * tt ** power * betaMoment(a, b, power);
    }
  }
  return Math.min(1, Math.max(0, chance));
}

export interface Growth {
  /** The chance that the reference backoff looks this flat (tests counted). */
  chance: number;
  /** The ratio read: the later waits' largest (scaled by 1/4, but `spikes` left out) to the first ones'. */
  ratio: number;
  /** The first retries' largest wait read (the longest EARLY_SPIKES left out), in ms. */
  early: number;
  /** The later retries' largest wait read, in ms. */
  late: number;
  /** Later waits left out as spikes. */
  spikes: number;
  firstRetries: number;
  laterRetries: number;
}

/**
 * Whether these retries (each its place in its chain and its wait) grow as a backoff's do: the chance that the
 * reference (full jitter, bound f, 2f, then 4f) shows later waits as short, next to its first ones, as these
 * (chanceOfFlat), the least over leaving out 0 to LATE_SPIKES of the longest later waits, times the tests
 * made. Undefined when there are fewer than LEAST_WAITS first-retry or later waits (nothing to compare).
 */
export function flatSchedule(
  retries: readonly { place: number; wait: number; floor?: number }[],
): Growth | undefined {
  const scaled = (place: number, wait: number) => Math.max(0, wait) / referenceBound(place);
  // The first retries' waits as short as the client may have meant them (`floor`: net of the stalls the
  // gateway saw), the later ones as measured: load, which only lengthens waits, cannot make them look flat.
  const first = retries
    .filter((r) => r.place <= 2 && Number.isFinite(r.wait))
    .map((r) => scaled(r.place, Math.min(r.wait, r.floor ?? r.wait)))
    .sort((a, b) => b - a);
  const later = retries
    .filter((r) => r.place >= 3 && Number.isFinite(r.wait))
    .map((r) => scaled(r.place, r.wait))
    .sort((a, b) => b - a);
  if (first.length < LEAST_WAITS || later.length < LEAST_WAITS) return undefined;
  const early = Math.min(EARLY_SPIKES, first.length - LEAST_WAITS + 1);
  const x = first[early] as number;
  if (!(x > 0)) return undefined;
  const tests = Math.min(LATE_SPIKES + 1, later.length - LEAST_WAITS + 1);
  let best = { chance: 1, ratio: (later[0] as number) / x, spikes: 0 };
  for (let spikes = 0; spikes < tests; spikes++) {
    const ratio = (later[spikes] as number) / x;
    const chance = chanceOfFlat(first.length, later.length, ratio, early, spikes);
    if (chance < best.chance) best = { chance, ratio, spikes };
  }
  return {
    chance: Math.min(1, best.chance * tests),
    ratio: best.ratio,
    early: x,
    late: (later[best.spikes] as number) * referenceBound(3),
    spikes: best.spikes,
    firstRetries: first.length,
    laterRetries: later.length,
  };
}

/**
 * The chance that a client backing off from `firstStep` ms or more (bound f, 2f, then 4f: the least-growing
 * backoff at the least common first step, full jitter) waits more than `ceiling` ms at no more than `above` of
 * these places (each past it with chance 1 - ceiling / bound, independently): a Poisson-binomial tail.
 */
export function chanceOfFewAbove(
  places: readonly number[],
  ceiling: number,
  above: number,
  firstStep: number,
): number {
  let probability = new Float64Array(above + 2);
  probability[0] = 1;
  for (const place of places) {
    const past = Math.max(0, 1 - Math.max(0, ceiling) / (firstStep * referenceBound(place)));
    const next = new Float64Array(above + 2);
    for (let j = 0; j <= above + 1; j++) {
      const here = probability[j] as number;
      if (here === 0) continue;
      const up = Math.min(above + 1, j + 1);
      next[j] = (next[j] as number) + here * (1 - past);
      next[up] = (next[up] as number) + here * past;
    }
    probability = next;
  }
  let chance = 0;
  for (let j = 0; j <= above; j++) chance += probability[j] as number;
  return chance;
}

/**
 * Waits that never passed a low ceiling, however one or two load spikes lengthened some: for a ceiling at the
 * longest wait, then at the second and third longest, the chance that a client backing off from `firstStep`
 * (bound f, 2f, then 4f, full jitter) stays that low (chanceOfFewAbove); the least of them times the tests.
 */
export function lowCeiling(
  retries: readonly { place: number; wait: number }[],
  firstStep: number,
): { chance: number; ceiling: number; spikes: number } {
  const waits = retries.map((r) => r.wait).sort((a, b) => b - a);
  const places = retries.map((r) => r.place);
  let best = { chance: 1, ceiling: waits[0] ?? 0, spikes: 0 };
  const tests = Math.min(LATE_SPIKES + 1, waits.length);
  if (tests === 0) return best;
  for (let spikes = 0; spikes < tests; spikes++) {
    const ceiling = waits[spikes] as number;
    const chance = chanceOfFewAbove(places, ceiling, spikes, firstStep);
    if (chance < best.chance) best = { chance, ceiling, spikes };
  }
  return { ...best, chance: Math.min(1, best.chance * tests) };
}
