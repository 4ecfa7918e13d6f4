/**
 * The client-rules matcher for jest, registered and typed by one import (in a test file or a
 * `setupFilesAfterEach` entry): `expect(gateway).toFollowClientRules('agent-early')`, graded on the requests
 * made since the current test began (a `beforeEach` registered here marks each test's start; jest's
 * `expect.getState()` names the test). And `runOnFakeTime(agent, { timers: jest })`, which runs an agent to
 * its end on jest's modern fake timers and returns its own outcome.
 *
 * @example
 * import { expect, jest } from '@jest/globals';
 * import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/jest';
 * expect(gateway).toFollowClientRules('agent-early');
 * await expect(runOnFakeTime(agentThatGivesUp(), { timers: jest })).rejects.toThrow(/gave up/);
 */
import { beforeEach, expect, jest } from '@jest/globals';
import { type FakeTimeOptions, runOnFakeTime as runOn } from './run-on-fake-time.ts';
import { type ClientRuleMatchers, clientRuleMatchers } from './testing.ts';
import { testStarted, useRunningTest } from './testing-marks.ts';

expect.extend(clientRuleMatchers as never);
useRunningTest(() => {
  const { currentTestName, testPath } = expect.getState();
  return { name: currentTestName, path: testPath };
});
beforeEach(() => {
  testStarted();
});

declare module 'expect' {
  interface Matchers<R extends void | Promise<void>, T = unknown> extends ClientRuleMatchers<R> {}
}

/**
 * Runs the agent to its end on jest's modern fake timers (`jest.useFakeTimers()` first; leave `nextTick` and
 * `queueMicrotask` real, which fetch and msw run on): fires each timer it sets, in order, while its promise
 * is pending, and settles as the agent does. `await expect(runOnFakeTime(agent())).rejects.toThrow(...)`
 * tests an agent that gives up; nothing is left unhandled.
 */
export function runOnFakeTime<T>(
  agent: Promise<T> | (() => Promise<T>),
  options: Partial<FakeTimeOptions> = {},
): Promise<T> {
  return runOn(agent, { timers: jest, ...options });
}

export type { FakeTimeOptions } from './run-on-fake-time.ts';
export {
  agentTimeline,
  assertFollowsClientRules,
  assertFollowsClientRulesShared,
  type ClientRuleMatchers,
  clientRuleMatchers,
  type GradeOptions,
  timelineOf,
} from './testing.ts';
export { journalMark } from './testing-marks.ts';
