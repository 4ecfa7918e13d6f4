import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDuration } from '../cli/commands/admin.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';
import { search } from './support/call.ts';
import { runCli } from './support/cli.ts';

const KEY = 'qa-admin-cli-key';
const START = Date.parse('2026-04-01T00:00:00.000Z');

// Each test starts CLI processes (tsx compiles the sources at every start): on a loaded 2-core machine one
// start takes seconds, so a test that starts several needs more than the default 20 s. No timing is
// asserted; the timeout only bounds a hang.
describe('agent-gateway admin', { timeout: 90_000 }, () => {
  let gateway: Gateway;
  let server: RunningServer;
  const admin = (args: string[], env: Record<string, string> = { AGENT_GATEWAY_ADMIN_KEY: KEY }) =>
    runCli(['admin', ...args, '--base-url', server.url], { env });
  const json = async (args: string[]) => {
    const result = await admin([...args, '--json']);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout);
  };

  beforeAll(async () => {
    gateway = createGateway({ adminKey: KEY, clock: createClock({ frozen: true, startAt: START }) });
    server = await serve(gateway, { port: 0 });
  });
  afterAll(() => server.close());

  it('scenarios: lists the bundled ones, loads one by name or from a file, and marks the one in force', async () => {
    const loaded = await admin(['scenarios', 'load', 'burst-429']);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(loaded.stdout).toMatch(/^Loaded burst-429: Every agent may make 5 tool calls/);
    const list = await admin(['scenarios']);
    expect(list.stdout).toMatch(/^\* burst-429 /m);
    expect(list.stdout).toMatch(/^ {2}flaky-5xx /m);
    const file = join(mkdtempSync(join(tmpdir(), 'admin-cli-')), 'mine.yaml');
    writeFileSync(
      file,
      'name: mine\ndescription: A scenario of my own.\nconfig:\n  identity: { token_ttl_seconds: 30 }\n',
    );
    const mine = await json(['scenarios', 'load', file]);
    expect(mine.scenario).toMatchObject({ name: 'mine', description: 'A scenario of my own.' });
    expect(gateway.scenario?.name).toBe('mine');
  });

  it('clock: shows, freezes, advances by a duration and sets; JSON is the admin API answer', async () => {
    expect((await admin(['clock'])).stdout.trim()).toBe('2026-04-01T00:00:00.000Z (frozen)');
    expect((await json(['clock', 'advance', '90s'])).now).toBe(START + 90_000);
    expect((await json(['clock', 'advance', '1500ms'])).now).toBe(START + 91_500);
    expect((await json(['clock', 'set', '2026-04-02T00:00:00Z'])).time).toBe('2026-04-02T00:00:00.000Z');
    const bad = await admin(['clock', 'advance', 'soon']);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringMatching(/advance soon: give a duration such as 10s/),
    ]);
  });

  it('faults: arms one with the admin API validation, lists it, disarms it', async () => {
    const armed = await json([
      'faults',
      'arm',
      '--kind',
      'status',
      '--status',
      '502',
      '--operation',
      'web.fetch',
      '--count',
      '2',
    ]);
    expect(armed).toMatchObject({ kind: 'status', status: 502, count: 2, match: { operation: 'web.fetch' } });
    expect((await admin(['faults'])).stdout).toMatch(
      new RegExp(`^${armed.id} +502 +web\\.fetch, any agent +every match, 2 time\\(s\\)`, 'm'),
    );
    // The gateway's own rule: a status fault forever would make it useless.
    const forever = await admin(['faults', 'arm', '--kind', 'drop']);
    expect([forever.code, forever.stderr]).toEqual([
      2,
      expect.stringMatching(/400 invalid_request: .*set count or every/),
    ]);
    // A tool this gateway does not have (web.extract is not declared here): refused, naming the field.
    const stray = await admin([
      'faults',
      'arm',
      '--kind',
      'drop',
      '--count',
      '1',
      '--operation',
      'web.extract',
    ]);
    expect([stray.code, stray.stderr]).toEqual([
      2,
      expect.stringMatching(
        /400 invalid_request: match\.operation: this gateway has no endpoint or tool "web\.extract"/,
      ),
    ]);
    expect((await json(['faults', 'disarm', armed.id])).faults).toEqual([]);
  });

  it('agents: create, update, show, mint a token (the last line), revoke', async () => {
    const created = await json([
      'agents',
      'create',
      'agent-qa',
      '--tier',
      'verified',
      '--api-key',
      'ak_qa_123456789',
    ]);
    expect(created).toMatchObject({ id: 'agent-qa', tier: 'verified', api_key: 'ak_qa_123456789' });
    const updated = await json(['agents', 'update', 'agent-qa', '--allowlist', 'web.fetch', '--disabled']);
    expect(updated).toMatchObject({ allowlist: ['web.fetch'], disabled: true });
    expect((await admin(['agents'])).stdout).toMatch(
      /^agent-qa +verified +web\.fetch +yes +ak_qa_123456789/m,
    );
    await json(['agents', 'update', 'agent-qa', '--no-disabled']);
    const token = (await admin(['agents', 'token', 'agent-qa'])).stdout.trim().split('\n').at(-1) as string;
    expect(gateway.idp.verify(token).ok).toBe(true);
    await admin(['agents', 'revoke-tokens', 'agent-qa']);
    expect(gateway.idp.verify(token).ok).toBe(false);
    const missing = await admin(['agents', 'show', 'nobody']);
    expect([missing.code, missing.stderr.trim()]).toEqual([
      2,
      'agent-gateway: The gateway refused /__admin/agents/nobody: 404 not_found: No agent "nobody".',
    ]);
  });

  it('journal and report: what an agent did, and exit 1 when it broke a client rule', async () => {
    await admin(['reset']);
    const early = gateway.mintToken('agent-early');
    // A denied tool called again with nothing changed: no-retry-on-access-denied.
    await search(server.url, early, 'denied');
    await search(server.url, early, 'denied');
    const journal = await admin(['journal', '--agent', 'agent-early']);
    expect(journal.stdout).toMatch(
      /^#\d+ +\d\d:\d\d:\d\d\.\d{3} +agent-early +POST \/v1\/web\/search +403 access_denied +denied$/m,
    );
    expect(journal.stdout).toMatch(/2 request\(s\)\.$/m);
    expect((await json(['journal', '--limit', '1'])).entries).toHaveLength(1);
    const report = await admin(['report', 'agent-early']);
    expect(report.code).toBe(1);
    expect(report.stdout).toMatch(/^FAIL {2}no-retry-on-access-denied/m);
    // The same command as `report`: the thresholds (reportOptionsSchema) reach the admin API.
    const tuned = await admin(['report', 'agent-early', '--json', '--retry-cap', '9', '--quiet-ms', '0']);
    expect(tuned.code).toBe(1);
    expect(JSON.parse(tuned.stdout).options).toEqual({
      retryCap: 9,
      graceMs: 100,
      maxConcurrencyAfter429: 2,
      quietMs: 0,
    });
    await json(['journal', 'clear']);
    expect((await admin(['journal'])).stdout.trim()).toBe('No request.');
  });

  it('could not: no key, a wrong key, no admin API, nothing listening (exit 2, said plainly)', async () => {
    const noKey = await admin(['clock'], { AGENT_GATEWAY_ADMIN_KEY: '' });
    expect([noKey.code, noKey.stderr]).toEqual([
      2,
      expect.stringMatching(/Give --admin-key \(or set AGENT_GATEWAY_ADMIN_KEY\)/),
    ]);
    const wrong = await admin(['clock', '--admin-key', 'not-the-key-1']);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/refused the admin key/)]);
    const plain = await serve(createGateway(), { port: 0 });
    try {
      const none = await runCli(['admin', 'agents', 'show', 'agent-early', '--base-url', plain.url], {
        env: { AGENT_GATEWAY_ADMIN_KEY: KEY },
      });
      expect([none.code, none.stderr]).toEqual([
        2,
        expect.stringMatching(/No admin API at .*start the gateway with --admin-key/),
      ]);
    } finally {
      await plain.close();
    }
    const closed = await runCli(['admin', 'clock', '--base-url', 'http://127.0.0.1:9'], {
      env: { AGENT_GATEWAY_ADMIN_KEY: KEY },
    });
    expect([closed.code, closed.stderr]).toEqual([
      2,
      expect.stringMatching(/Cannot reach the gateway at http:\/\/127\.0\.0\.1:9/),
    ]);
  });

  it('parseDuration', () => {
    expect([
      parseDuration('10'),
      parseDuration('10s'),
      parseDuration('250ms'),
      parseDuration('2m'),
      parseDuration('1.5h'),
    ]).toEqual([10_000, 10_000, 250, 120_000, 5_400_000]);
    expect(() => parseDuration('-1s')).toThrow(/give a duration/);
  });
});

describe('agent-gateway openapi', { timeout: 90_000 }, () => {
  it('prints the document, or writes it; --no-admin leaves the admin API out', async () => {
    const printed = await runCli(['openapi', '--server-url', 'http://gateway.test:8080']);
    expect(printed.code, printed.stderr).toBe(0);
    const doc = JSON.parse(printed.stdout);
    expect(doc.openapi).toBe('3.1.1');
    expect(doc.servers[0].url).toBe('http://gateway.test:8080');
    expect(Object.keys(doc.paths)).toContain('/__admin/faults');
    const file = join(mkdtempSync(join(tmpdir(), 'openapi-cli-')), 'out', 'openapi.json');
    const written = await runCli(['openapi', '--out', file, '--no-admin']);
    expect([written.code, written.stderr]).toEqual([
      0,
      `agent-gateway: wrote the OpenAPI 3.1 document to ${file}\n`,
    ]);
    const paths = Object.keys(JSON.parse(readFileSync(file, 'utf8')).paths);
    expect(paths.filter((p) => p.startsWith('/__admin'))).toEqual([]);
    expect(paths).toContain('/v1/web/search');
  });

  it("--config describes the config's extra tools; a bad one is a clear error (exit 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-config-'));
    const config = join(dir, 'tools.yaml');
    writeFileSync(config, 'tools:\n  web.extract: { path: /v1/web/extract, tiers: [verified] }\n');
    const printed = await runCli(['openapi', '--config', config]);
    expect(printed.code, printed.stderr).toBe(0);
    const doc = JSON.parse(printed.stdout);
    expect(doc.paths['/v1/web/extract'].post.operationId).toBe('webExtract');
    writeFileSync(config, 'tools:\n  web.extract: { path: /v1/web/search }\n');
    const refused = await runCli(['openapi', '--config', config]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("/v1/web/search is already web.search's path");
  });
});
