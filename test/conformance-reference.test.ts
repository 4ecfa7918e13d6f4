import { describe, expect, it } from 'vitest';
import { describeConformance } from '../conformance/vitest.ts';
import { formatClientReport } from '../mock-server/client-report/report.ts';
import { servedGateway } from './support/served-gateway.ts';

/**
 * The conformance suite against the reference gateway, through the suite's own vitest front-end: every
 * check must pass, the 429 checks included (inconclusive counts as a failure here). Then the suite itself
 * is graded as a client: it must follow every client safety rule it expects of agents. This proof runs over
 * real time (the suite's real waits, the gateway's real clock), as a user's run does: the proof catalogues
 * (test/suite-proof-*.test.ts) run on a virtual clock shared with the suite, so this file and the CLI tests
 * are what prove the real-time plumbing.
 */
const target = servedGateway();

describeConformance('conformance of the reference gateway (default config)', async () => {
  const { gateway, baseUrl, clock } = await target.start();
  // Every MUST check observed: an expired genuine token (minted two hours back on the gateway's clock) and
  // a revoked one, of agents of their own, so the verified and early agents' client reports stay theirs.
  clock.set(Date.now() - 2 * 3600_000);
  const expiredToken = gateway.mintToken('agent-none');
  clock.reset();
  const revokedToken = gateway.mintToken('agent-allowlisted');
  gateway.registry.revokeTokens('agent-allowlisted');
  return {
    baseUrl,
    token: gateway.mintToken('agent-verified'),
    deniedToken: gateway.mintToken('agent-early'),
    deniedTool: 'web.search',
    expiredToken,
    revokedToken,
    tier: 'verified',
    failOnInconclusive: true,
  };
});

describe('the conformance suite as a client', () => {
  it('follows every client safety rule: no rule fires on its own traffic, but for the denied call it repeats on purpose', () => {
    const gateway = target.ran();
    const verified = gateway.clientReport('agent-verified');
    expect(verified.requests).toBeGreaterThan(0);
    expect(verified.violations, formatClientReport(verified)).toEqual([]);
    // authz.access-denied sends the denied call four times (first, repeat, reformatted, another body):
    // a tester checking that the refusal holds, which an agent must not do. That, and nothing else.
    const early = gateway.clientReport('agent-early');
    expect(early.requests).toBeGreaterThan(0);
    expect(
      early.violations.map((v) => [v.rule, v.message.replace(/, first by .*/, '')]),
      formatClientReport(early),
    ).toEqual([
      [
        'no-retry-on-access-denied',
        'web.search was denied (403 access_denied) and then called again 3 time(s)',
      ],
    ]);
  });
});
