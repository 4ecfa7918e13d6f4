/**
 * The client-rules matcher for vitest, registered and typed by one import (in a test file or a
 * `setupFiles` entry): `expect(gateway).toFollowClientRules('agent-early')`, graded on the requests made
 * since the current test began (a `beforeEach` registered here marks each test's start; vitest's
 * `expect.getState()` names the test). And `runOnFakeTime(agent)`, which runs an agent to its end on
 * vitest's fake timers and returns its own outcome.
 *
 * @example
 * import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/vitest';
 * // ... let the agent work against the gateway ...
 * expect(gateway).toFollowClientRules('agent-early');
 * await expect(runOnFakeTime(agentThatGivesUp())).rejects.toThrow(/gave up/);
 */
import { beforeEach, expect, vi } from 'vitest';
import { type FakeTimeOptions, runOnFakeTime as runOn } from './run-on-fake-time.ts';
import { type ClientRuleMatchers, clientRuleMatchers } from './testing.ts';
import { testStarted, useRunningTest } from './testing-marks.ts';

expect.extend(clientRuleMatchers);
useRunningTest(() => {
  const { currentTestName, testPath } = expect.getState();
  return { name: currentTestName, path: testPath };
});
beforeEach(() => {
  testStarted();
});

// Typed on chai's Assertion, which vitest's assertion maps (vitest 4 and 5 alike): vitest's own Matchers
// changed its type parameters in vitest 5 (<T> to <R, T>), and a declaration merged into it must repeat
// them, so one declaration there could not serve both majors.
declare global {
  namespace Chai {
    interface Assertion extends ClientRuleMatchers<void> {}
  }
}

/**
 * Runs the agent to its end on vitest's fake timers (`vi.useFakeTimers()` first): fires each timer it sets,
 * in order, while its promise is pending, and settles as the agent does. `await
 * expect(runOnFakeTime(agent())).rejects.toThrow(...)` tests an agent that gives up; nothing is left unhandled.
 */
export function runOnFakeTime<T>(
  agent: Promise<T> | (() => Promise<T>),
  options: Omit<FakeTimeOptions, 'timers'> = {},
): Promise<T> {
  return runOn(agent, { ...options, timers: vi });
}

export type { FakeTimeOptions } from './run-on-fake-time.ts';
export {
  agentTimeline,
  assertFollowsClientRules,
  assertFollowsClientRulesShared,
  clientRuleMatchers,
  type GradeOptions,
  timelineOf,
} from './testing.ts';
export { journalMark } from './testing-marks.ts';
