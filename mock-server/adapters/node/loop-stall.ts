/**
 * How long, in all, this process's event loop has been held up: a clock that moves only while the loop is
 * late (a loaded machine that does not schedule the process, a long synchronous job, a garbage collection).
 * The journal notes it when a request is read (`stalled_ms`); between two entries its difference bounds how
 * much of the time between them was the machine's, not the client's: a timer of a client in this process
 * (or one on the same loaded machine) that was due meanwhile fired that much late at most. The client
 * report reads a retry's wait net of it (client-report/facts/retries.ts `waitNetOfStalls`), so a backoff
 * whose waits load lengthened is not read as a schedule that never grew.
 * Measured by a probe timer every PROBE_MS while requests come (armed for ARMED_MS after each one, so an idle
 * process runs nothing): its lateness past SLACK_MS is added to the clock. The slack leaves out the steady
 * lateness of a busy machine (a few ms per timer, which summed over many probes would far exceed what any
 * one timer of a client was delayed): only stalls count.
 */
const PROBE_MS = 10;
const SLACK_MS = 20;
const ARMED_MS = 60_000;

let stalled = 0;
let due: number | undefined;
let armedUntil = 0;
// Taken when the module loads: a test that fakes timers afterwards would otherwise freeze the probe.
const schedule = globalThis.setTimeout;

function probe(): void {
  const now = performance.now();
  stalled += Math.max(0, now - (due as number) - SLACK_MS);
  if (now < armedUntil) arm(now);
  else due = undefined;
}

function arm(now: number): void {
  due = now + PROBE_MS;
  schedule(probe, PROBE_MS).unref();
}

/** The loop's stalls so far, in ms, the one under way (a probe overdue) included; arms the probe. */
export function stallClock(): number {
  const now = performance.now();
  armedUntil = now + ARMED_MS;
  if (due === undefined) {
    arm(now);
    return stalled;
  }
  return stalled + Math.max(0, now - due - SLACK_MS);
}
