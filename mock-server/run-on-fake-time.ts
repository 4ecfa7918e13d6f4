import { fakedTicksMessage } from './fake-ticks.ts';

/**
 * Runs an agent to its end on a test runner's fake timers, for tests of agents that sleep out Retry-After
 * and back off: each timer the agent sets fires at once, in order, while its promise is pending. It returns
 * the agent's own outcome: its value, or its rejection (an agent that gives up), which the caller awaits or
 * asserts on (`await expect(runOnFakeTime(agent)).rejects.toThrow(...)`); the rejection is never left
 * unhandled while the timers are advanced, as a helper built on `agent.finally(...)` leaves it.
 * Runner-free here; `testing/vitest` and `testing/jest` pass their runner's timers.
 */

/** The fake-timer controls used: vitest's `vi` and jest's `jest` (modern timers) both have them. */
export interface FakeTimers {
  advanceTimersToNextTimerAsync(): unknown;
  getTimerCount(): number;
}

export interface FakeTimeOptions {
  /** The runner's fake timers: `vi` (vitest), `jest` (from `@jest/globals`). */
  timers: FakeTimers;
  /** Most timers fired before it gives up on an agent that never ends on fake time (default 10 000). */
  maxTimers?: number;
}

const DEFAULT_MAX_TIMERS = 10_000;

/**
 * The agent's outcome once it settles, firing its fake timers meanwhile. Pass the agent's promise, or a
 * function that starts it (a throw at its start becomes the rejection).
 *
 * @example
 * vi.useFakeTimers();
 * await expect(runOnFakeTime(() => myAgent.run('question'), { timers: vi })).rejects.toThrow(/gave up/);
 */
export async function runOnFakeTime<T>(
  agent: Promise<T> | (() => Promise<T>),
  options: FakeTimeOptions,
): Promise<T> {
  const { timers, maxTimers = DEFAULT_MAX_TIMERS } = options ?? {};
  if (
    typeof timers?.advanceTimersToNextTimerAsync !== 'function' ||
    typeof timers.getTimerCount !== 'function'
  )
    throw new TypeError(
      "runOnFakeTime needs the runner's fake timers: { timers: vi } (vitest) or { timers: jest } (jest, from '@jest/globals'), after useFakeTimers().",
    );
  // Faked ticks hold every request before msw sees it: fail now, naming the fix, not after ENOTFOUND.
  const faked = fakedTicksMessage();
  if (faked) throw new Error(`runOnFakeTime: ${faked}`);
  if (!Number.isInteger(maxTimers) || maxTimers < 1)
    throw new TypeError(`runOnFakeTime: maxTimers must be a positive integer; got ${String(maxTimers)}.`);
  const running = typeof agent === 'function' ? (async () => agent())() : Promise.resolve(agent);
  let settled = false;
  const outcome = running.finally(() => {
    settled = true;
  });
  // Handled here as well, so a rejection is not reported as unhandled while the timers are advanced: the
  // caller receives it from the promise returned below.
  outcome.catch(() => {});
  const startedAt = Date.now();
  let fired = 0;
  while (!settled) {
    const pending = timers.getTimerCount();
    // With nothing pending it yields to real I/O (msw's answer) for a moment instead.
    await timers.advanceTimersToNextTimerAsync();
    if (pending > 0 && ++fired >= maxTimers && !settled)
      throw new Error(
        `runOnFakeTime: the agent was still running after ${fired} timers (${Date.now() - startedAt} ms of fake time): a loop that never ends? Give { maxTimers } if that many are expected.`,
      );
  }
  return outcome;
}
