/**
 * When, and for how long, this process's event loop was held up (a loaded machine that does not schedule the
 * process, a long synchronous job, a garbage collection). The journal notes, when a request is read, the
 * loop's longest stalls before it (`longest_stalls`): a staircase of [ended, ms] pairs on the real clock, each
 * stall longer than every one after it, so that the longest single stall since any moment is the first pair
 * that ended after it. Between an answer and a later request, that bounds how late a timer of the client's
 * (in this process, or on the same loaded machine) due meanwhile fired: a timer is late by the one stall it
 * fell in, never by the sum of several. The client report reads a retry's wait net of it
 * (client-report/facts/retries.ts `waitNetOfStalls`), so a backoff whose waits load lengthened is not read as
 * a schedule that never grew, while a long run's many small stalls cannot add up to excuse a real violation.
 * Measured by a probe timer every PROBE_MS while requests come (armed for ARMED_MS after each one, so an idle
 * process runs nothing): its lateness past SLACK_MS is a stall. The slack leaves out the steady lateness of a
 * busy machine (a few ms per timer): only stalls count.
 */
const PROBE_MS = 10;
const SLACK_MS = 20;
const ARMED_MS = 60_000;
/** How far back the staircase reaches (a wait longer than this is not lengthened much by one stall). */
const LOOKBACK_MS = ARMED_MS;
/** At most this many steps are kept (the oldest, longest, dropped first). */
const MOST_STEPS = 32;

/** A stall: when it ended (performance.now(), ms) and how long it was (ms). */
export type Stall = [ended: number, ms: number];

// The staircase: oldest first, each longer than every later one.
const steps: Stall[] = [];
let due: number | undefined;
let armedUntil = 0;
// Taken when the module loads: a test that fakes timers afterwards would otherwise freeze the probe.
const schedule = globalThis.setTimeout;

/** `stall` added at the staircase's end: the shorter-or-equal ones before it are no step any more. */
function stepOn(staircase: Stall[], stall: Stall): void {
  while (staircase.length > 0 && (staircase.at(-1) as Stall)[1] <= stall[1]) staircase.pop();
  staircase.push(stall);
}

function probe(): void {
  const now = performance.now();
  const late = now - (due as number) - SLACK_MS;
  if (late > 0) {
    stepOn(steps, [now, late]);
    while (steps.length > MOST_STEPS || (steps.length > 0 && (steps[0] as Stall)[0] < now - LOOKBACK_MS))
      steps.shift();
  }
  if (now < armedUntil) arm(now);
  else due = undefined;
}

function arm(now: number): void {
  due = now + PROBE_MS;
  schedule(probe, PROBE_MS).unref();
}

const rounded = (ms: number) => Math.round(ms * 100) / 100;

/**
 * The loop's longest stalls up to now, the one under way (a probe overdue) included, as the staircase above
 * (oldest first, rounded to 0.01 ms); arms the probe.
 */
export function longestStalls(): Stall[] {
  const now = performance.now();
  armedUntil = now + ARMED_MS;
  const staircase = steps.filter(([ended]) => ended >= now - LOOKBACK_MS);
  if (due === undefined) arm(now);
  else if (now - due - SLACK_MS > 0) stepOn(staircase, [now, now - due - SLACK_MS]);
  return staircase.map(([ended, ms]) => [rounded(ended), rounded(ms)]);
}
