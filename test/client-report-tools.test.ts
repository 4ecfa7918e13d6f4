import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { formatClientReport } from '../mock-server/client-report/report.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { assertFollowsClientRules } from '../mock-server/testing.ts';
import { UNPRINTABLE } from '../vocabulary/redact.ts';
import '../mock-server/testing-vitest.ts';
import { send, wellBehavedAgent } from './support/agents.ts';
import { call } from './support/call.ts';
import { runCli, startServe } from './support/cli.ts';
import { runFaked } from './support/fake-time.ts';

describe('the vitest matcher, for agents tested in-process with msw', () => {
  const gateway = createGateway({
    config: {
      rate_limits: {
        rules: [{ name: 'tight', scope: 'agent', algorithm: 'token_bucket', limit: 2, window_seconds: 1 }],
      },
    },
  });
  const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterAll(() => server.close());

  // On fake time (runOnFakeTime, as the guide shows): the agent's waits and the gateway's clock move together,
  // so no stall of a loaded machine can leave a rule NOT OBSERVED and fail the matcher.
  it('passes an agent that followed the rules', async () => {
    const agent = wellBehavedAgent({ baseUrl: 'http://gateway.test', apiKey: 'ak_verified_2b8d4f6a1c9e' });
    vi.useFakeTimers();
    try {
      await runFaked(
        (async () => {
          for (const q of ['one', 'two', 'three', 'four']) await agent.search(q);
        })(),
      );
    } finally {
      vi.useRealTimers();
    }
    expect(gateway.journal.list({ agent: 'agent-verified' }).some((e) => e.status === 429)).toBe(true);
    expect(gateway).toFollowClientRules('agent-verified');
  }, 15_000);

  it('fails an agent that broke one, with the report and a timeline of what it did', async () => {
    const token = gateway.mintToken('agent-early');
    await send('http://gateway.test', token, 'POST', '/v1/web/search', { query: 'q' });
    await send('http://gateway.test', token, 'POST', '/v1/web/search', { query: 'q' });
    expect(gateway).not.toFollowClientRules('agent-early');
    // The same verdict without vitest's expect (node:test, mocha, jest without extend).
    expect(() => assertFollowsClientRules(gateway, 'agent-early')).toThrow(/no-retry-on-access-denied/);
    // agent-verified sent nothing in this test: graded on the whole journal (the test before), by choice.
    expect(() => assertFollowsClientRules(gateway, 'agent-verified')).toThrow(/seen in this test/);
    expect(assertFollowsClientRules(gateway, 'agent-verified', { since: 0 }).violations).toEqual([]);
    expect(() => expect(gateway).toFollowClientRules('agent-early')).toThrow(
      /FAIL {2}no-retry-on-access-denied[\s\S]*What agent-early did \(2 requests\):\n {2}\+ +0\.000 s {2}#\d+ POST \/v1\/web\/search -> 403 access_denied/,
    );
  });
});

describe('a report that graded nothing, or not everything, says so', () => {
  it('fails the matcher for an agent without requests, and throws for an unknown agent (a typo)', () => {
    const gateway = createGateway();
    // With .not as well: an assertion about an agent that did nothing cannot be made either way.
    expect(() => expect(gateway).toFollowClientRules('agent-none')).toThrow(
      'Nothing to grade: the journal holds no request from agent-none.',
    );
    expect(() => expect(gateway).not.toFollowClientRules('agent-none')).toThrow(/Nothing to grade/);
    expect(() => assertFollowsClientRules(gateway, 'agent-none')).toThrow(/Nothing to grade/);
    expect(() => expect(gateway).toFollowClientRules('agent-verifed')).toThrow(
      /No agent "agent-verifed" and no request from it in the journal\. Agents: .*agent-verified/,
    );
  });

  it('lists no rule as PASS for an agent without requests: each is not observed', () => {
    const report = createGateway().clientReport('agent-none');
    expect(report.requests).toBe(0);
    expect(report.rules.length).toBeGreaterThan(0);
    for (const rule of report.rules)
      expect(rule).toMatchObject({ violations: 0, unobserved: 'no request from agent-none was seen' });
    const text = formatClientReport(report);
    expect(text).not.toMatch(/^PASS/m);
    expect(text.match(/^NOT OBSERVED/gm)).toHaveLength(report.rules.length);
  });

  it('escapes control characters the agent sent (a page it read may have written them)', async () => {
    const gateway = createGateway();
    const token = gateway.mintToken('agent-verified');
    const query = 'ok\x1b[2K\r\x1b[1APASS  honor-retry-after\u202e CANARY-SECRET-3f9a2c7e1b5d';
    expect((await call(gateway, 'POST', '/v1/web/search', { token, body: { query } })).status).toBe(200);
    let message = '';
    try {
      assertFollowsClientRules(gateway, 'agent-verified');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('FAIL  no-secrets-in-requests');
    expect(message).toContain('ok\\x1b[2K\\x0d\\x1b[1APASS  honor-retry-after\\u202e');
    expect(message).not.toMatch(new RegExp(UNPRINTABLE.source));
  });

  it('tells when the journal dropped older requests, which the rules could not judge', async () => {
    const gateway = createGateway({ config: { journal: { capacity: 3 } } });
    const token = gateway.mintToken('agent-early');
    for (let k = 0; k < 5; k++) await call(gateway, 'GET', '/v1/whoami', { token });
    const report = gateway.clientReport('agent-early');
    expect(report.requests).toBe(3);
    expect(report.journal_dropped).toBe(2);
    expect(formatClientReport(report)).toContain('the journal dropped 2 older ones');
    gateway.reset();
    await call(gateway, 'GET', '/v1/whoami', { token });
    expect(gateway.clientReport('agent-early').journal_dropped).toBeUndefined();
  });
});

describe('GET /__admin/report', () => {
  const gateway = createGateway({ adminKey: 'report-admin-key' });
  const admin = (query: string) =>
    call(gateway, 'GET', `/__admin/report${query}`, { headers: { 'x-admin-key': 'report-admin-key' } });

  it('answers the report as JSON: { agent, violations: [{ rule, spec_ref, message, requests }] }', async () => {
    const token = gateway.mintToken('agent-early');
    await call(gateway, 'POST', '/v1/web/search', { token, body: { query: 'q' } });
    await call(gateway, 'POST', '/v1/web/search', { token, body: { query: 'q' } });
    const report = await admin('?agent=agent-early');
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      agent: 'agent-early',
      requests: 2,
      violations: [
        {
          rule: 'no-retry-on-access-denied',
          spec_ref: expect.any(String),
          message: expect.any(String),
          requests: expect.any(Array),
        },
      ],
    });
  });

  it('takes thresholds, refuses bad ones (400) and unknown agents (404), and needs the admin key', async () => {
    expect((await admin('?agent=agent-early&retry_cap=10')).body.options).toMatchObject({
      retryCap: 10,
      graceMs: 100,
    });
    expect((await admin('?agent=agent-early&retry_cap=zero')).status).toBe(400);
    expect((await admin('')).body).toMatchObject({ code: 'invalid_request', field: 'agent' });
    expect((await admin('?agent=nobody')).status).toBe(404);
    expect((await call(gateway, 'GET', '/__admin/report?agent=agent-early')).status).toBe(401);
  });
});

describe('agent-gateway report', () => {
  it('prints the report of a running gateway; exit 1 with violations, 0 without, 2 when it cannot', async () => {
    const server = await startServe(['--admin-key', 'cli-report-key']);
    const report = (adminKey: string, agent: string, ...more: string[]) =>
      runCli(['report', '--base-url', server.url, '--admin-key', adminKey, '--agent', agent, ...more]);
    try {
      const minted = await call(server.url, 'POST', '/idp/token', {
        body: { api_key: 'ak_early_7c3e9a1b5d2f' },
      });
      const token = minted.body.token as string;
      await call(server.url, 'GET', '/v1/whoami', { token });
      const clean = await report('cli-report-key', 'agent-early');
      expect(clean.code).toBe(0);
      expect(clean.stdout).toMatch(/PASS {2}honor-retry-after/);
      expect(clean.stdout).toMatch(/No violations of 8 rules/);
      await send(server.url, token, 'POST', '/v1/web/fetch', { url: `https://a.example/?t=${token}` });
      const dirty = await report('cli-report-key', 'agent-early');
      expect(dirty.code).toBe(1);
      expect(dirty.stdout).toMatch(/FAIL {2}no-secrets-in-requests +§1 rule 2/);
      expect(dirty.stdout).toContain('[REDACTED:own_identity_token]');
      expect(dirty.stdout).not.toContain(token);
      const json = await report('cli-report-key', 'agent-early', '--json');
      expect(JSON.parse(json.stdout).violations.map((v: { rule: string }) => v.rule)).toEqual([
        'no-secrets-in-requests',
      ]);
      const wrongKey = await report('wrong-key-123', 'agent-early');
      expect(wrongKey.code).toBe(2);
      expect(wrongKey.stderr).toMatch(/403 admin_key_invalid/);
      const unknown = await report('cli-report-key', 'nobody');
      expect(unknown.code).toBe(2);
      const idle = await report('cli-report-key', 'agent-none');
      expect(idle.code).toBe(2);
      expect(idle.stderr).toContain('Nothing to grade: the journal holds no request from agent-none.');
    } finally {
      await server.stop();
    }
  }, 60_000);
});
