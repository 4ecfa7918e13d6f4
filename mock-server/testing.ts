/**
 * Test helpers for agent developers who run the reference gateway in-process (msw): grade the agent under
 * test against the spec's client safety rules, with a readable account of what it did. Independent of any
 * test runner: vitest users import `agent-tool-gateway-harness/testing/vitest` (matcher registered and
 * typed), jest users `expect.extend(clientRuleMatchers)` and declare `ClientRuleMatchers` on jest's
 * `Matchers`, anyone else calls `assertFollowsClientRules`.
 *
 * @example
 * import { expect } from '@jest/globals';
 * import { clientRuleMatchers } from 'agent-tool-gateway-harness/testing';
 * expect.extend(clientRuleMatchers);
 * // ... let the agent work against the gateway ...
 * expect(gateway).toFollowClientRules('agent-early');
 */

import { z } from 'zod';
import { printable } from '../vocabulary/redact.ts';
import {
  type ClientReport,
  formatClientReport,
  nothingToGrade,
  reportPasses,
} from './client-report/report.ts';
import { reportOptionsSchema } from './client-report/report-options.ts';
import { TIMELINE_REQUESTS, timelineOf } from './client-report/timeline.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import { fakedTicksMessage, OWN_SOCKETS_HINT } from './fake-ticks.ts';
import type { Gateway } from './gateway.ts';
import { isGateway } from './is-gateway.ts';
import type { JournalEntry } from './journal/journal.ts';
import type { MaybePromise } from './maybe-promise.ts';
import { currentTestMark, journalMark } from './testing-marks.ts';

/**
 * What the agent did, one request per line, relative to its first request (see `timelineOf`): the same
 * account the client report carries (`report.timeline`) and the matchers show.
 */
export function agentTimeline(gateway: Gateway, agent: string, last = TIMELINE_REQUESTS): string {
  return timelineOf(gateway.journal.list({ agent }), agent, last);
}

export { timelineOf };

const kindOf = (value: unknown) =>
  value === null
    ? 'null'
    : typeof value !== 'object'
      ? `${typeof value} ${printable(String(value)).slice(0, 60)}`
      : Array.isArray(value)
        ? 'an array'
        : `an object (${printable(Object.keys(value).slice(0, 6).join(', ')) || 'no keys'})`;

/** The message for something that is not a gateway handed to the matcher. */
export const notAGateway = (value: unknown) =>
  `toFollowClientRules grades the gateway the agent talked to: expect(gateway).toFollowClientRules('agent-id'), where gateway = createGateway(...) (the one passed to gatewayHandlers, or served). Received ${kindOf(value)}.`;

/** What the matchers and asserts take beside the rules' thresholds: which requests to grade. */
export const gradeScopeSchema = reportOptionsSchema.pick({ since: true }).extend({
  allowNoRequests: z
    .boolean()
    .optional()
    .describe('an agent with no request to grade passes (it was expected not to call) instead of failing'),
});

/** The client rules' thresholds, and which requests to grade (`since`, `allowNoRequests`). */
export type GradeOptions = Partial<ClientReportOptions> & z.input<typeof gradeScopeSchema>;

/**
 * Which requests were graded: the current test's, those after a given mark, none (a test the runner entry
 * did not mark: nothing after the journal's latest entry), or the whole journal.
 */
type Scope = { kind: 'test' | 'since' | 'unmarked'; mark: number } | { kind: 'journal' };

const PER_TEST_HINT =
  "Requests are counted per test: through gatewayHandlers(gateway) always; through gateway.fetch or over HTTP when the runner entry's beforeEach ran for the test (import 'agent-tool-gateway-harness/testing/vitest' or '/testing/jest' at the top of the test file, or in setupFiles). Elsewhere pass { since: journalMark(gateway) } taken when the test began.";

/**
 * Why nothing was graded, with the likely causes: a wrong agent id (the agents the journal holds are named),
 * or requests that never reached the gateway (msw not listening: `fetch failed`, ENOTFOUND for the base URL).
 */
function nothingToGradeBecause(agent: string, journal: readonly JournalEntry[], scope: Scope): string {
  const counts = new Map<string, number>();
  for (const e of journal) if (e.agent) counts.set(e.agent, (counts.get(e.agent) ?? 0) + 1);
  const others = [...counts].map(([id, n]) => `${id} (${n})`).join(', ');
  const where =
    scope.kind === 'journal'
      ? 'The journal holds'
      : scope.kind === 'since'
        ? `After #${scope.mark} the journal holds`
        : 'In this test the journal holds';
  return [
    scope.kind === 'journal'
      ? nothingToGrade(agent)
      : scope.kind === 'since'
        ? `Nothing to grade: no request from ${agent} was seen after #${scope.mark}.`
        : `Nothing to grade: no request from ${agent} was seen in this test.`,
    others
      ? `${where} requests from: ${printable(others)}. Is ${agent} the agent whose token the agent under test sent?`
      : `${where} no request at all: none reached the gateway.`,
    ...(fakedTicksMessage() === undefined ? [] : [fakedTicksMessage() as string]),
    "If the agent's requests failed (TypeError: fetch failed, getaddrinfo ENOTFOUND for the gateway's host), msw was not intercepting them: call server.listen() before the agent runs (beforeAll(() => server.listen())), and give the agent the base URL passed to gatewayHandlers (default http://gateway.test).",
    OWN_SOCKETS_HINT,
    ...(scope.kind === 'unmarked' ? [PER_TEST_HINT] : []),
    'If this test expects the agent not to call the gateway at all, say so: { allowNoRequests: true }.',
  ].join('\n');
}

/** The shared-store case: the journal is in the store, read asynchronously. */
const sharedStoreNote =
  'This gateway is on a shared store: its journal is there, read asynchronously. Use `await expect(gateway).toFollowClientRules(agent)` or `await gateway.readClientReport(agent)`.';

/** Which requests to grade: `since` if given, else the current test's (see testing-marks.ts), else all. */
function scopeOf(gateway: Gateway, options: GradeOptions = {}): MaybePromise<Scope> {
  const given = gradeScopeSchema.safeParse({
    since: options.since,
    allowNoRequests: options.allowNoRequests,
  });
  if (!given.success)
    throw new TypeError(
      `toFollowClientRules / assertFollowsClientRules options: ${z.prettifyError(given.error)}`,
    );
  const { since } = given.data;
  if (since !== undefined) return { kind: 'since', mark: since };
  const mark = currentTestMark(gateway);
  if (mark === undefined) return { kind: 'journal' };
  const kind = mark === 'unmarked' ? 'unmarked' : 'test';
  const seq = mark === 'unmarked' ? journalMark(gateway) : mark;
  return seq instanceof Promise ? seq.then((at) => ({ kind, mark: at })) : { kind, mark: seq };
}

interface Graded {
  /** The gateway's own report of the requests in scope (`since` the scope's mark), with its timeline. */
  report: ClientReport;
  scope: Scope;
}

/** The report's options for a scope: the rules' thresholds, and `since` the scope's mark. */
function reportOptionsOf(scope: Scope, options: GradeOptions = {}): Partial<ClientReportOptions> {
  const { since: _since, allowNoRequests: _allow, ...thresholds } = options;
  return scope.kind === 'journal' ? thresholds : { ...thresholds, since: scope.mark };
}

/** Every agent's entries in scope: what the journal holds, for the nothing-to-grade message. */
const inScope = (scope: Scope, entries: readonly JournalEntry[]) =>
  scope.kind === 'journal' ? entries : entries.filter((e) => e.seq > scope.mark);

/**
 * The gateway's report (`clientReport`, `readClientReport`: the report's own entry point) over the requests in
 * scope, or why there is nothing to grade (thrown: never a pass). An agent the gateway neither knows nor
 * journaled throws there (a typo).
 */
function graded(
  report: ClientReport,
  scope: Scope,
  options: GradeOptions | undefined,
  journal: () => readonly JournalEntry[],
): Graded {
  if (report.requests === 0 && !options?.allowNoRequests)
    throw new Error(nothingToGradeBecause(report.agent, inScope(scope, journal()), scope));
  return { report, scope };
}

/** Grades from this process's journal (synchronous): a gateway on a shared store throws. */
function gradeHere(gateway: Gateway, agent: string, options?: GradeOptions): Graded {
  if (gateway.runtime.shared)
    throw new Error(`${sharedStoreNote} Or await assertFollowsClientRulesShared(...).`);
  const scope = scopeOf(gateway, options) as Scope;
  const report = gateway.clientReport(agent, reportOptionsOf(scope, options));
  return graded(report, scope, options, () => gateway.journal.list());
}

/** Grades from the journal in use (the shared store's, read in slices, when there is one). */
async function gradeInUse(gateway: Gateway, agent: string, options?: GradeOptions): Promise<Graded> {
  const scope = await scopeOf(gateway, options);
  const report = await gateway.readClientReport(agent, reportOptionsOf(scope, options));
  const journal =
    report.requests === 0 && !options?.allowNoRequests
      ? (await gateway.runtime.state.journal.readInSlices({})).entries
      : [];
  return graded(report, scope, options, () => journal);
}

/**
 * Throws, with the report and the agent's timeline, unless the agent followed every rule. Grades the
 * requests of the test now running (with a runner entry: `testing/vitest`, `testing/jest`), those after
 * `since` when given, else the whole journal. An agent with no request to grade fails too (a wrong agent id,
 * or the agent never reached the gateway), unless `allowNoRequests`. A gateway on a shared store keeps its
 * journal there: use `assertFollowsClientRulesShared` (awaited).
 */
export function assertFollowsClientRules(
  gateway: Gateway,
  agent: string,
  options?: GradeOptions,
): ClientReport {
  if (!isGateway(gateway)) throw new TypeError(notAGateway(gateway));
  const { report } = gradeHere(gateway, agent, options);
  if (!passes(report)) throw new Error(failureText(report));
  return report;
}

/** `assertFollowsClientRules` for any gateway, a shared store's included (its journal read from the store). */
export async function assertFollowsClientRulesShared(
  gateway: Gateway,
  agent: string,
  options?: GradeOptions,
): Promise<ClientReport> {
  if (!isGateway(gateway)) throw new TypeError(notAGateway(gateway));
  const { report } = await gradeInUse(gateway, agent, options);
  if (!passes(report)) throw new Error(failureText(report));
  return report;
}

/**
 * Whether the graded requests pass: every rule observed and kept. No request at all reaches here only when the
 * caller said none were expected (allowNoRequests; otherwise grading threw), and then it passes.
 */
const passes = (report: ClientReport) => report.requests === 0 || reportPasses(report);

/** The report as text and the agent's timeline, as the gateway renders them (what every harness shows). */
const failureText = (report: ClientReport) =>
  `${report.text ?? formatClientReport(report)}\n\n${report.timeline}`;

const verdict = ({ report }: Graded, agent: string) => {
  const pass = passes(report);
  return {
    pass,
    message: () =>
      pass
        ? `expected ${agent} to break a client rule, but it followed all ${report.rules.length}\n\n${report.timeline}`
        : `expected ${agent} to follow the client safety rules\n\n${failureText(report)}`,
  };
};

/**
 * vitest / jest matchers: `expect.extend(clientRuleMatchers)`, then `expect(gateway).toFollowClientRules(agent)`.
 * They grade the requests of the test now running (see `assertFollowsClientRules`). Nothing graded is
 * neither a pass nor (with `.not`) a failure caught: the assertion cannot be made, it throws. On a gateway
 * with a shared store the matcher reads the store's journal and returns a promise: await it.
 */
export const clientRuleMatchers = {
  toFollowClientRules(received: unknown, agent: string, options?: GradeOptions) {
    if (!isGateway(received)) throw new TypeError(notAGateway(received));
    if (typeof agent !== 'string' || agent === '')
      throw new TypeError(
        `toFollowClientRules needs the id of the agent to grade, e.g. expect(gateway).toFollowClientRules('agent-early'); got ${kindOf(agent)}.`,
      );
    if (received.runtime.shared)
      return gradeInUse(received, agent, options).then((graded) => verdict(graded, agent));
    return verdict(gradeHere(received, agent, options), agent);
  },
};

/**
 * The matcher's type, to merge into a test runner's `Matchers` (see testing-vitest.ts, and the README for
 * jest). Declared here without naming a runner, so this module's types need none installed.
 */
export interface ClientRuleMatchers<R = unknown> {
  /** The agent followed every client safety rule of the spec (report from the gateway's journal). */
  toFollowClientRules(agent: string, options?: GradeOptions): R;
}

export { type FakeTimeOptions, type FakeTimers, runOnFakeTime } from './run-on-fake-time.ts';
export { journalMark } from './testing-marks.ts';
