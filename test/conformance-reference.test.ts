import { afterAll, describe, expect, it } from 'vitest';
import { describeConformance } from '../conformance/vitest.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { formatClientReport } from '../mock-server/client-report/report.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';

/**
 * The conformance suite against the reference gateway, through the suite's own vitest front-end: every
 * check must pass, the 429 checks included (inconclusive counts as a failure here). Then the suite itself
 * is graded as a client: it must follow every client safety rule it expects of agents.
 */
let server: RunningServer | undefined;
let gateway: Gateway | undefined;
afterAll(() => server?.close());

describeConformance('conformance of the reference gateway (default config)', async () => {
  gateway = createGateway();
  server = await serve(gateway, { port: 0 });
  return {
    baseUrl: server.url,
    token: gateway.mintToken('agent-verified'),
    deniedToken: gateway.mintToken('agent-early'),
    deniedTool: 'web.search',
    failOnInconclusive: true,
  };
});

describe('the conformance suite as a client', () => {
  it('follows every client safety rule: no rule fires on its own traffic', () => {
    if (!gateway) throw new Error('the conformance run did not start');
    for (const agent of ['agent-verified', 'agent-early']) {
      const report = gateway.clientReport(agent);
      expect(report.requests).toBeGreaterThan(0);
      expect(report.violations, formatClientReport(report)).toEqual([]);
    }
  });
});
