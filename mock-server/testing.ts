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

import { printable } from '../conformance/redact.ts';
import { describe } from './client-report/journal-facts.ts';
import { type ClientReport, formatClientReport, nothingToGrade } from './client-report/report.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import type { Gateway } from './gateway.ts';

/**
 * What the agent did, one request per line, relative to its first request, with the connection it came on
 * (over node:http): a request on the connection of a refusal, after it, reacted to it.
 */
export function agentTimeline(gateway: Gateway, agent: string, last = 40): string {
  const entries = gateway.journal.list({ agent });
  const start = entries[0]?.real_ms ?? 0;
  const shown = entries.slice(-last);
  const lines = shown.map((e) => {
    const extra = [
      e.connection !== undefined ? `conn ${e.connection}` : '',
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

/**
 * Throws, with the report and the agent's timeline, unless the agent followed every rule. An agent with no
 * request in the journal fails too: nothing was graded (a wrong agent id, or the agent never ran).
 */
export function assertFollowsClientRules(
  gateway: Gateway,
  agent: string,
  options?: Partial<ClientReportOptions>,
): ClientReport {
  const report = gateway.clientReport(agent, options);
  if (report.requests === 0) throw new Error(nothingToGrade(agent));
  if (report.violations.length > 0)
    throw new Error(`${formatClientReport(report)}\n\n${agentTimeline(gateway, agent)}`);
  return report;
}

/** vitest / jest matchers: `expect.extend(clientRuleMatchers)`, then `expect(gateway).toFollowClientRules(agent)`. */
export const clientRuleMatchers = {
  toFollowClientRules(received: Gateway, agent: string, options?: Partial<ClientReportOptions>) {
    const report = received.clientReport(agent, options);
    // Nothing graded is neither a pass nor (with .not) a failure caught: the assertion cannot be made.
    if (report.requests === 0) throw new Error(nothingToGrade(agent));
    const pass = report.violations.length === 0;
    return {
      pass,
      message: () =>
        pass
          ? `expected ${agent} to break a client rule, but it followed all ${report.rules.length}\n\n${agentTimeline(received, agent)}`
          : `expected ${agent} to follow the client safety rules\n\n${formatClientReport(report)}\n\n${agentTimeline(received, agent)}`,
    };
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
