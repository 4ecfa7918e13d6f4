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

import { printable } from '../vocabulary/redact.ts';
import { describe, firstWhere, hasDeliveryFacts } from './client-report/journal-facts.ts';
import {
  type ClientReport,
  formatClientReport,
  nothingToGrade,
  reportPasses,
} from './client-report/report.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import type { Gateway } from './gateway.ts';
import type { JournalEntry } from './journal/journal.ts';

/**
 * For each in-process entry (delivery facts), the latest of the agent's own answers it was issued with in
 * hand: `after #12` in the timeline. Over node:http the connection says it instead.
 */
function answersInHand(entries: readonly JournalEntry[]): Map<JournalEntry, JournalEntry> {
  // Answer orders count per adapter (delivery instance): a shared journal holds several counts.
  const byInstance = new Map<JournalEntry['delivery_instance'], JournalEntry[]>();
  for (const e of entries) {
    if (!hasDeliveryFacts(e)) continue;
    const group = byInstance.get(e.delivery_instance);
    if (group) group.push(e);
    else byInstance.set(e.delivery_instance, [e]);
  }
  const inHand = new Map<JournalEntry, JournalEntry>();
  for (const group of byInstance.values()) {
    const delivered = [...group].sort((a, b) => (a.answer_order as number) - (b.answer_order as number));
    for (const e of group) {
      const k = firstWhere(
        delivered.length,
        (j) => (delivered[j]?.answer_order as number) > (e.answers_seen as number),
      );
      const last = delivered[k - 1];
      if (last) inHand.set(e, last);
    }
  }
  return inHand;
}

/**
 * What the agent did, one request per line, relative to its first request, with what tells a reaction from
 * a request already on its way: the connection it came on (over node:http: a request on the connection of a
 * refusal, after it, reacted to it), or in process the latest answer the agent had in hand when it issued
 * the request (`after #12`: issued once #12 was answered; `before any answer`).
 */
export function agentTimeline(gateway: Gateway, agent: string, last = 40): string {
  return timelineOf(gateway.journal.list({ agent }), agent, last);
}

/** The timeline of one agent's journal entries (oldest first). */
export function timelineOf(entries: readonly JournalEntry[], agent: string, last = 40): string {
  const start = entries[0]?.real_ms ?? 0;
  const shown = entries.slice(-last);
  const inHand = answersInHand(entries);
  const lines = shown.map((e) => {
    const after = inHand.get(e);
    const extra = [
      e.connection !== undefined ? `conn ${e.connection}` : '',
      hasDeliveryFacts(e) ? (after ? `after #${after.seq}` : 'before any answer') : '',
      e.retry_after !== undefined ? `Retry-After ${e.retry_after}` : '',
      e.query ?? e.url ?? '',
    ]
      .filter(Boolean)
      .join('  ');
    return `  +${((e.real_ms - start) / 1000).toFixed(3).padStart(8)} s  ${describe(e)}${extra ? `  ${extra}` : ''}`;
  });
  const skipped = entries.length - shown.length;
  return printable(
    [
      `What ${agent} did (${entries.length} requests):`,
      ...(skipped > 0 ? [`  ... ${skipped} earlier requests`] : []),
      ...lines,
    ].join('\n'),
  );
}

/** Whether `value` is a gateway made by `createGateway` (what the matcher grades). */
const isGateway = (value: unknown): value is Gateway =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Gateway).clientReport === 'function' &&
  typeof (value as Gateway).readClientReport === 'function' &&
  typeof (value as Gateway).journal?.list === 'function';

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

/**
 * Why nothing was graded, with the likely causes: a wrong agent id (the agents the journal holds are named),
 * or requests that never reached the gateway (msw not listening: `fetch failed`, ENOTFOUND for the base URL).
 */
function nothingToGradeBecause(agent: string, journal: readonly JournalEntry[]): string {
  const counts = new Map<string, number>();
  for (const e of journal) if (e.agent) counts.set(e.agent, (counts.get(e.agent) ?? 0) + 1);
  const others = [...counts].map(([id, n]) => `${id} (${n})`).join(', ');
  return [
    nothingToGrade(agent),
    others
      ? `The journal holds requests from: ${printable(others)}. Is ${agent} the agent whose token the agent under test sent?`
      : 'The journal holds no request at all: none reached the gateway.',
    "If the agent's requests failed (TypeError: fetch failed, getaddrinfo ENOTFOUND for the gateway's host), msw was not intercepting them: call server.listen() before the agent runs (beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))), and give the agent the base URL passed to gatewayHandlers (default http://gateway.test).",
  ].join('\n');
}

/** The shared-store case: the journal is in the store, read asynchronously. */
const sharedStoreNote =
  'This gateway is on a shared store: its journal is there, read asynchronously. Use `await expect(gateway).toFollowClientRules(agent)` or `await gateway.readClientReport(agent)`.';

/**
 * Throws, with the report and the agent's timeline, unless the agent followed every rule. An agent with no
 * request in the journal fails too: nothing was graded (a wrong agent id, or the agent never ran). A gateway
 * on a shared store keeps its journal there: use `assertFollowsClientRulesShared` (awaited).
 */
export function assertFollowsClientRules(
  gateway: Gateway,
  agent: string,
  options?: Partial<ClientReportOptions>,
): ClientReport {
  if (!isGateway(gateway)) throw new TypeError(notAGateway(gateway));
  if (gateway.runtime.shared)
    throw new Error(`${sharedStoreNote} Or await assertFollowsClientRulesShared(...).`);
  const report = gateway.clientReport(agent, options);
  if (report.requests === 0) throw new Error(nothingToGradeBecause(agent, gateway.journal.list()));
  if (!reportPasses(report))
    throw new Error(`${formatClientReport(report)}\n\n${agentTimeline(gateway, agent)}`);
  return report;
}

/** `assertFollowsClientRules` for any gateway, a shared store's included (its journal read from the store). */
export async function assertFollowsClientRulesShared(
  gateway: Gateway,
  agent: string,
  options?: Partial<ClientReportOptions>,
): Promise<ClientReport> {
  if (!isGateway(gateway)) throw new TypeError(notAGateway(gateway));
  const { report, entries, journal } = await gradeFromJournalInUse(gateway, agent, options);
  if (report.requests === 0) throw new Error(nothingToGradeBecause(agent, journal));
  if (!reportPasses(report))
    throw new Error(`${formatClientReport(report)}\n\n${timelineOf(entries, agent)}`);
  return report;
}

/** The report, the agent's entries and the whole journal, from the journal in use (the shared one if any). */
async function gradeFromJournalInUse(
  gateway: Gateway,
  agent: string,
  options?: Partial<ClientReportOptions>,
) {
  const report = await gateway.readClientReport(agent, options);
  // In memory every entry; on a shared store its first page.
  const { entries: journal } = await gateway.runtime.state.journal.list({});
  return { report, entries: journal.filter((e) => e.agent === agent), journal };
}

const verdict = (report: ClientReport, agent: string, timeline: string) => {
  const pass = reportPasses(report);
  return {
    pass,
    message: () =>
      pass
        ? `expected ${agent} to break a client rule, but it followed all ${report.rules.length}\n\n${timeline}`
        : `expected ${agent} to follow the client safety rules\n\n${formatClientReport(report)}\n\n${timeline}`,
  };
};

/**
 * vitest / jest matchers: `expect.extend(clientRuleMatchers)`, then `expect(gateway).toFollowClientRules(agent)`.
 * On a gateway with a shared store the matcher reads the store's journal and returns a promise: await it.
 */
export const clientRuleMatchers = {
  toFollowClientRules(received: unknown, agent: string, options?: Partial<ClientReportOptions>) {
    if (!isGateway(received)) throw new TypeError(notAGateway(received));
    if (typeof agent !== 'string' || agent === '')
      throw new TypeError(
        `toFollowClientRules needs the id of the agent to grade, e.g. expect(gateway).toFollowClientRules('agent-early'); got ${kindOf(agent)}.`,
      );
    if (received.runtime.shared)
      return gradeFromJournalInUse(received, agent, options).then(({ report, entries, journal }) => {
        // Nothing graded is neither a pass nor (with .not) a failure caught: the assertion cannot be made.
        if (report.requests === 0) throw new Error(nothingToGradeBecause(agent, journal));
        return verdict(report, agent, timelineOf(entries, agent));
      });
    const report = received.clientReport(agent, options);
    // Nothing graded is neither a pass nor (with .not) a failure caught: the assertion cannot be made.
    if (report.requests === 0) throw new Error(nothingToGradeBecause(agent, received.journal.list()));
    return verdict(report, agent, agentTimeline(received, agent));
  },
};

/**
 * The matcher's type, to merge into a test runner's `Matchers` (see testing-vitest.ts, and the README for
 * jest). Declared here without naming a runner, so this module's types need none installed.
 */
export interface ClientRuleMatchers<R = unknown> {
  /** The agent followed every client safety rule of the spec (report from the gateway's journal). */
  toFollowClientRules(agent: string, options?: Partial<ClientReportOptions>): R;
}
