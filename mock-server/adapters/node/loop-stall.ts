/**
 * When, and for how long, this process's event loop was held up (a loaded machine that does not schedule the
 * process, a long synchronous job, a garbage collection), as runs of stalls: a run is the stalls with no
 * prompt probe between them (the loop never caught up meanwhile). The journal notes, when a request is read,
 * the runs before it (`stall_runs`: [from, to, stalled, longest] on the real clock), over node:http and in
 * process (the fetch adapter: msw, `gateway.fetch`) alike, since the client's timers run on the same machine. Between an answer and a
 * later request, what the machine may have added to a client's steps is the run under way when the answer
 * was written (the client reading it) and the run under way when the request was read (its timer firing,
 * the client sending it): a stall the loop caught up from in between delayed nothing, so a long run's many
 * small stalls cannot add up to excuse a real violation, while a loop that never caught up (a saturated
 * process) excuses all it lost.
 * The client report reads a retry's wait net of it (client-report/facts/causality.ts `stallBetween`).
 * Measured by a probe timer every PROBE_MS while requests come (armed for ARMED_MS after each one, so an idle
 * process runs nothing): its lateness past SLACK_MS is a stall, a probe on time within it ends a run. The
 * slack leaves out the steady lateness of a busy machine (a few ms per timer): only stalls count.
 */
const PROBE_MS = 10;
const SLACK_MS = 20;
const ARMED_MS = 60_000;
/** How far back the runs reach (a wait longer than this is not lengthened much by the machine). */
const LOOKBACK_MS = ARMED_MS;
/** At most this many runs are kept (the oldest dropped first). */
const MOST_RUNS = 64;

/** A run of stalls: from when, to when (performance.now(), ms), the time lost in all and the longest stall. */
type StallRun = [from: number, to: number, stalled: number, longest: number];

const runs: StallRun[] = [];
// Whether the last run is still under way: no probe on time since its last stall.
let open = false;
let due: number | undefined;
let armedUntil = 0;
// Taken when the module loads: a test that fakes timers afterwards would otherwise freeze the probe.
const schedule = globalThis.setTimeout;
const realPerformance = globalThis.performance;
const realNow = realPerformance.now.bind(realPerformance);
const realNowFn = realPerformance.now;

/**
 * Whether the journal's clock (`performance.now()`, which `real_ms` reads) is a runner's fake one (vitest and
 * jest fake it with their timers): then the client's waits are the test's, no stall of the machine lengthens
 * them, and runs of stalls on the real clock would not compare with the journal's times.
 */
const clockFaked = () =>
  globalThis.performance !== realPerformance || globalThis.performance.now !== realNowFn;

/** `late` ms lost up to `now`, added to the run under way (`open`) of `list`, or as a run of its own. */
function addStall(list: StallRun[], isOpen: boolean, now: number, late: number): void {
  const last = list.at(-1);
  if (isOpen && last) {
    last[1] = now;
    last[2] += late;
    last[3] = Math.max(last[3], late);
  } else list.push([now - late, now, late, late]);
}

function probe(): void {
  const now = realNow();
  const late = now - (due as number) - SLACK_MS;
  if (late > 0) {
    addStall(runs, open, now, late);
    open = true;
    while (runs.length > MOST_RUNS || (runs[0] as StallRun)[1] < now - LOOKBACK_MS) runs.shift();
  } else open = false;
  if (now < armedUntil) arm(now);
  else {
    due = undefined;
    open = false;
  }
}

function arm(now: number): void {
  due = now + PROBE_MS;
  // unref where the host has it (Node): an idle process is not kept alive by the probe.
  (schedule(probe, PROBE_MS) as { unref?: () => void }).unref?.();
}

const rounded = (ms: number) => Math.round(ms * 100) / 100;

/**
 * The loop's runs of stalls up to now (oldest first, rounded to 0.01 ms), the stall under way (a probe
 * overdue) included in the run it belongs to; arms the probe. None while the clock is faked (`clockFaked`).
 */
export function stallRuns(): StallRun[] {
  if (clockFaked()) return [];
  const now = realNow();
  armedUntil = now + ARMED_MS;
  const list = runs
    .filter(([, to]) => to >= now - LOOKBACK_MS)
    .map((run): StallRun => [run[0], run[1], run[2], run[3]]);
  if (due === undefined) arm(now);
  else if (now - due - SLACK_MS > 0) addStall(list, open, now, now - due - SLACK_MS);
  return list.map(([from, to, stalled, longest]) => [
    rounded(from),
    rounded(to),
    rounded(stalled),
    rounded(longest),
  ]);
}
