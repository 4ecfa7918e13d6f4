import type { SuiteClock } from '../model/suite-clock.ts';
import { backoffMs, flooredWaitMs } from './client-pacing.ts';

/* The suite client's waits (http-client.ts): pausing on the suite's clock, the gates a 429 or an exhausted
 * rate limit put on a scope, and the wait planned before a retry. */

interface WaitSettings {
  clock: SuiteClock;
  /** When the run's time budget ends, on `clock` (ms). */
  deadline: number;
  /** Longest wait granted (--max-wait-seconds). */
  maxWaitSeconds: number;
  log: (line: string) => void;
  /** The suite's floor under a scope's asked waits (client-pacing.ts's createWaitFloors). */
  floorOf: (scope: string) => number;
}

/** A planned wait before a retry (ms), or why there is none. */
type PlannedWait = { wait: number } | { refused: 'max-wait' | 'time-budget' };

/**
 * The suite's one formula for the wait before retry `attempt` (ms): the wait asked (Retry-After, compared
 * as asked: 10 s asked is within a 10 s cap) plus up to 100 ms of the suite's own jitter, or `floorMs` and
 * its jitter over an asked wait shorter than it; without one, exponential backoff with jitter, at least
 * `floorMs`. `max-wait` when the wait asked, or the backoff, is beyond `maxWaitMs`.
 *
 * @example
 * retryWaitMs(4000, 1, 30_000); // 4000 to 4100
 * retryWaitMs(undefined, 2, 30_000); // 500 to 1000
 * retryWaitMs(31_000, 1, 30_000); // 'max-wait'
 */
export function retryWaitMs(
  asked: number | undefined,
  attempt: number,
  maxWaitMs: number,
  floorMs = 0,
  random = Math.random,
): number | 'max-wait' {
  const base = asked ?? backoffMs(attempt, random, maxWaitMs);
  if (base > maxWaitMs) return 'max-wait';
  if (asked === undefined) return Math.max(base, floorMs);
  return floorMs > asked ? flooredWaitMs(asked, floorMs, random) : asked + random() * 100;
}

export function createClientWaits({ clock, deadline, maxWaitSeconds, log, floorOf }: WaitSettings) {
  let waitedMs = 0;
  /** Per scope, until when the gateway asked not to be called (a 429's wait, or no request left). */
  const gates = new Map<string, { until: number; why: string }>();

  /** Waits `ms` on the suite's clock, saying now and then that it still is (a CI log must not look hung). */
  const pause = async (ms: number, why: string) => {
    if (ms >= 2000 && why)
      log(
        `  waiting ${(ms / 1000).toFixed(1)} s: ${why}${Number.isFinite(deadline) ? ` (${Math.max(0, Math.round((deadline - clock.now()) / 1000))} s of the time budget left)` : ''}`,
      );
    const started = clock.now();
    for (let left = ms; left > 0; ) {
      const step = Math.min(left, 15_000);
      await clock.sleep(step);
      left -= step;
      if (left > 0 && why) log(`  ... still waiting (${Math.ceil(left / 1000)} s left)`);
    }
    waitedMs += clock.now() - started;
  };

  return {
    pause,
    /** Time spent waiting so far (ms, on the suite's clock). */
    get waitedMs() {
      return waitedMs;
    },
    /** Remembers a wait the gateway asked of a scope, so that its next calls are paced instead of refused. */
    learn(scope: string, waitMs: number | undefined, why: string) {
      if (waitMs === undefined || waitMs <= 0) return;
      const until = clock.now() + waitMs;
      const gate = gates.get(scope);
      if (!gate || gate.until < until) gates.set(scope, { until, why });
    },
    /** A wait a 429 asked of a scope, with the scope's floor under it once the gateway's waits proved short. */
    floored: (scope: string, asked: number | undefined) =>
      asked === undefined ? undefined : flooredWaitMs(asked, floorOf(scope)),
    /** Holds a call until its scope's gate opens, when that is within --max-wait-seconds and the budget. */
    async paced(scope: string, what: string) {
      const gate = gates.get(scope);
      if (!gate) return;
      const wait = gate.until - clock.now();
      if (wait <= 0 || wait > maxWaitSeconds * 1000 || gate.until > deadline) return;
      await pause(wait + 50, `before ${what}: ${gate.why}`);
    },
    /**
     * The wait before a retry (the wait asked, in ms, else backoff), or why there is none: beyond
     * --max-wait-seconds, or past the run's time budget. A wait asked is compared as asked (10 s asked is
     * within --max-wait-seconds 10); the jitter added to it is the suite's own.
     */
    waitFor(asked: number | undefined, attempt: number, floorMs = 0): PlannedWait {
      const wait = retryWaitMs(asked, attempt, maxWaitSeconds * 1000, floorMs);
      if (wait === 'max-wait') return { refused: 'max-wait' };
      if (clock.now() + wait > deadline) return { refused: 'time-budget' };
      return { wait };
    },
  };
}

export type ClientWaits = ReturnType<typeof createClientWaits>;
