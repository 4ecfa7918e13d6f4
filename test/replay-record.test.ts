import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { spawnServe } from '../dev/spawn-serve.ts';
import type { ClientReport } from '../mock-server/client-report/report.ts';
import { runCli, startServe } from './support/cli.ts';

/*
 * Issue 36, point 2, with real processes: a gateway with limits as the "real" target, the proxy in front of
 * it, a deterministic agent through the proxy; the HAR export converted into a scenario; the scenario served;
 * the same agent again. The statuses, Retry-After and RateLimit fields meet it at the same points, and the
 * client report grades it the same, rule by rule.
 */

const KEY = 'qa-secret-key';
const env = { AGENT_GATEWAY_ADMIN_KEY: KEY };
const API_KEYS = {
  'agent-verified': 'ak_verified_2b8d4f6a1c9e',
  'agent-allowlisted': 'ak_allowlisted_9e5a3c7b1d4f',
};

// The target: 5 tool calls per hour, on a clock frozen at the start of an hour, so that the 6th call is a
// 429 asking for 3600 s whatever the machine's speed (no window boundary can fall inside the run).
const TARGET_SCENARIO = `name: hour-limit
description: 5 tool calls per hour per agent, fixed window, on a frozen clock.
config:
  rate_limits:
    retry_after: seconds
    rules:
      - { name: tool-calls, scope: agent, algorithm: fixed_window, limit: 5, window_seconds: 3600, operations: [web.search, web.fetch] }
clock: { frozen: true, start: 2026-01-01T00:00:00Z }
`;

// Longer than the report's graceMs (100 ms): a lower bound, so no machine is too slow or too fast for it.
const REACTION_MS = 300;

interface Seen {
  what: string;
  status: number;
  retryAfter: string | null;
  rateLimit: string | null;
  code?: string;
}

/**
 * A deterministic agent (nothing it does depends on time): six searches; after the first 429 it retries at
 * once, 0.3 s later (breaking honor-retry-after), then gives up searching, asks whoami and fetches one page.
 */
async function runAgent(baseUrl: string, apiKey: string): Promise<Seen[]> {
  const minted = await fetch(`${baseUrl}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  });
  const { token } = (await minted.json()) as { token: string };
  const seen: Seen[] = [];
  const send = async (what: string, path: string, body?: unknown) => {
    const answer = await fetch(`${baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    const code = (JSON.parse(text) as { code?: string }).code;
    seen.push({
      what,
      status: answer.status,
      retryAfter: answer.headers.get('retry-after'),
      rateLimit: answer.headers.get('ratelimit'),
      ...(code ? { code } : {}),
    });
    return answer.status;
  };
  for (let i = 1; i <= 6; i++) {
    if ((await send(`search q${i}`, '/v1/web/search', { query: `incident q${i}` })) !== 429) continue;
    // At least REACTION_MS after the 429: a reaction to it, whichever pooled connection carries the retry
    // (within the report's grace a request on another open connection may have been on its way already).
    await sleep(REACTION_MS);
    await send(`search q${i} again`, '/v1/web/search', { query: `incident q${i}` });
    break;
  }
  await send('whoami', '/v1/whoami');
  await send('fetch', '/v1/web/fetch', { url: 'https://docs.example/page' });
  return seen;
}

const reportOf = async (baseUrl: string, agent: string) => {
  const answer = await fetch(`${baseUrl}/__admin/report?agent=${agent}`, { headers: { 'x-admin-key': KEY } });
  return (await answer.json()) as ClientReport;
};
/** What a report decides: each rule's verdict and how many violations. */
const verdicts = (report: ClientReport) =>
  report.rules.map((r) => `${r.violations === 0 ? 'PASS' : 'FAIL'} ${r.id} ${r.violations}`);

describe('record through the proxy, convert, replay: the same answers and the same report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-record-'));
  const started: { stop(): Promise<unknown> }[] = [];
  let target: Awaited<ReturnType<typeof startServe>>;
  let proxy: Awaited<ReturnType<typeof startServe>>;
  beforeAll(async () => {
    writeFileSync(join(dir, 'target.yaml'), TARGET_SCENARIO);
    target = await startServe(['--scenario', join(dir, 'target.yaml'), '--admin-key', KEY]);
    started.push(target);
    proxy = await spawnServe(['--target', target.url, '--admin-key', KEY, '--journal-body-bytes', '65536'], {
      command: 'proxy',
    });
    started.push(proxy);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays what the recorded gateway answered, and grades the agent the same', async () => {
    const recorded = await runAgent(proxy.url, API_KEYS['agent-verified']);
    // The recording holds the incident: five answers, a 429 asking for an hour, the retry refused again.
    expect(recorded.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 200, 429]);
    expect(recorded[5]).toMatchObject({ retryAfter: '3600', code: 'rate_limited' });
    const recordedReport = await reportOf(proxy.url, 'agent-verified');
    expect(verdicts(recordedReport)).toContain('FAIL honor-retry-after 1');

    const har = join(dir, 'incident.har');
    const exported = await runCli(
      ['admin', 'export', '--format', 'har', '--out', har, '--base-url', proxy.url],
      {
        env,
      },
    );
    expect(exported.code, exported.stderr).toBe(0);
    const scenarioFile = join(dir, 'incident.yaml');
    const converted = await runCli(['scenario', 'from-har', har, '--out', scenarioFile]);
    expect(converted.code, converted.stderr).toBe(0);
    const yaml = readFileSync(scenarioFile, 'utf8');
    // Plain YAML; the agent's API key and token appear nowhere (the recording had them redacted, and the
    // scenario keeps answers only).
    const scenario = parse(yaml) as { replay: { agents: Record<string, { status: number }[]> } };
    expect(Object.keys(scenario.replay.agents)).toEqual(['agent-verified']);
    expect(scenario.replay.agents['agent-verified']?.map((a) => a.status)).toEqual(
      recorded.map((s) => s.status),
    );
    expect(yaml).not.toContain(API_KEYS['agent-verified']);
    expect(yaml).not.toMatch(/agt1\./);

    // The journal's NDJSON export converts to the same replay.
    const ndjson = await runCli(['admin', 'journal', 'export', '--base-url', proxy.url], { env });
    writeFileSync(join(dir, 'incident.ndjson'), ndjson.stdout);
    const fromNdjson = await runCli(['scenario', 'from-har', join(dir, 'incident.ndjson')]);
    expect(fromNdjson.code, fromNdjson.stderr).toBe(0);
    expect((parse(fromNdjson.stdout) as typeof scenario).replay.agents).toEqual(scenario.replay.agents);

    const replay = await startServe(['--scenario', scenarioFile, '--admin-key', KEY]);
    started.push(replay);
    expect(replay.output()).toMatch(
      /replay: 9 recorded answer\(s\) of agent-verified, in order per endpoint/,
    );
    const replayed = await runAgent(replay.url, API_KEYS['agent-verified']);
    expect(replayed).toEqual(recorded);
    const replayReport = await reportOf(replay.url, 'agent-verified');
    expect(verdicts(replayReport)).toEqual(verdicts(recordedReport));
    // Each violation rests on the same requests, met at the same points (seq, status, code, Retry-After).
    const shown = (report: ClientReport) =>
      report.violations.map((v) => ({
        rule: v.rule,
        count: v.count,
        requests: v.requests.map((r) => [r.seq, r.operation, r.status, r.code, r.retry_after]),
      }));
    expect(shown(replayReport)).toEqual(shown(recordedReport));

    // One recorded agent: any agent calling the replay meets the same answers.
    const other = await runAgent(replay.url, API_KEYS['agent-allowlisted']);
    expect(other).toEqual(recorded);
  }, 180_000);
});
