import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError } from '../mock-server/config/load-config.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { scenarioFromRecording, UNNAMED_AGENT } from '../mock-server/scenarios/replay-convert.ts';
import { readRecording } from '../mock-server/scenarios/replay-recording.ts';
import type { ScenarioInput } from '../mock-server/scenarios/scenarios.ts';
import { call, search } from './support/call.ts';
import { runCli } from './support/cli.ts';

/*
 * Issue 36, point 1: a recording (any HAR 1.2 file, the proxy's HAR export, the journal's NDJSON export) as a
 * scenario whose replay answers each agent the way the recorded gateway did; bad files are clear errors.
 */

const START = Date.parse('2026-03-01T10:00:00Z');
const iso = (ms: number) => new Date(START + ms).toISOString();

/** A HAR entry as another tool writes it: no `_agent`, a base path before /v1, base64 content. */
// A raw token, as a HAR from another tool holds it: the scenario keeps no request, so it never appears.
const RAW_TOKEN = 'agt1.eyJzdWIiOiJ4In0.Xy7kQ2pL9mN4vB8cR1tZ5wE3aF6gH0jKXy7kQ2pL9mN';

function foreignEntry(
  ms: number,
  path: string,
  status: number,
  headers: [string, string][],
  body: string,
  token: string | null = RAW_TOKEN,
) {
  return {
    startedDateTime: iso(ms),
    time: 3,
    request: {
      // Each endpoint's own method: another one is left out (a CORS preflight, a GET answered 405).
      method: /\/(whoami|health)$/.test(path) ? 'GET' : 'POST',
      url: `https://gw.example.com/api${path}`,
      headers: token === null ? [] : [{ name: 'X-Agent-Identity', value: token }],
      httpVersion: 'HTTP/1.1',
    },
    response: {
      status,
      statusText: '',
      headers: headers.map(([name, value]) => ({ name, value })),
      content: {
        size: body.length,
        mimeType: 'application/json',
        text: Buffer.from(body).toString('base64'),
        encoding: 'base64',
      },
    },
  };
}

const foreignHar = (entries: unknown[]) =>
  JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries } });

const INCIDENT = foreignHar([
  foreignEntry(
    0,
    '/v1/web/search',
    200,
    [
      [':status', '200'],
      ['Content-Type', 'application/json'],
      ['Set-Cookie', 'session=abc'],
      ['Date', 'x'],
      ['Link', '<a>'],
      ['link', '<b>'],
    ],
    '{"results":[]}',
  ),
  foreignEntry(
    40,
    '/v1/web/search',
    429,
    [
      // The recorded gateway's clock was 3 s behind the recorder's: its Retry-After asked for 10 s.
      ['Date', 'Sun, 01 Mar 2026 09:59:57 GMT'],
      ['Retry-After', 'Sun, 01 Mar 2026 10:00:07 GMT'],
      ['RateLimit', '"calls";r=0;t=7'],
    ],
    '{"code":"rate_limited","message":"slow down","debug_token":"sk-ant-api03-Xy7kQ2pL9mN4vB8cR1tZ5wE3aF6gH0jK"}',
  ),
  foreignEntry(80, '/v1/web/fetch', 0, [], ''),
  foreignEntry(90, '/v1/health', 200, [], '{"status":"ok"}'),
  // No token: the replaying gateway refuses it itself, so it is no answer to replay.
  foreignEntry(95, '/v1/whoami', 401, [], '{"code":"missing_identity_token"}', null),
  // A token refused: the replaying gateway judges the tokens it mints itself.
  foreignEntry(97, '/v1/whoami', 401, [], '{"code":"invalid_identity_token"}'),
]);

const convert = (text: string, source = 'incident.har', agentMap?: Record<string, string>) =>
  scenarioFromRecording(readRecording(text, source), { source, agentMap });

describe('scenario from a recording', () => {
  it('keeps each answer of a foreign HAR in order, with its time, headers and body, and leaves out the rest', () => {
    const { scenario, warnings, yaml } = convert(INCIDENT);
    expect(scenario.name).toBe('replay-incident');
    expect(scenario.clock).toEqual({ frozen: false, start: iso(0) });
    const answers = scenario.replay?.agents[UNNAMED_AGENT];
    expect(answers?.map((a) => [a.operation, a.at_ms, a.status])).toEqual([
      ['web.search', 0, 200],
      ['web.search', 40, 429],
      ['web.fetch', 80, 0],
    ]);
    // Framing, Date, cookies and HTTP/2 pseudo-headers are not kept; the rest is, by lower-case name.
    expect(answers?.[0]?.headers).toEqual({ 'content-type': 'application/json', link: '<a>, <b>' });
    expect(answers?.[1]?.headers).toMatchObject({
      'retry-after': 'Sun, 01 Mar 2026 10:00:07 GMT',
      ratelimit: '"calls";r=0;t=7',
    });
    expect(answers?.[0]?.json).toEqual({ results: [] });
    expect(warnings).toEqual([
      'left out 1 exchange(s): health (not replayed)',
      'left out 1 exchange(s): whoami without an agent (no valid token) (not replayed)',
      'left out 1 exchange(s): whoami answered 401 (the replaying gateway judges its own tokens) (not replayed)',
    ]);
    // The scenario is plain YAML that reads back to the same scenario, and holds no secret.
    expect(parse(yaml)).toEqual(scenario);
    expect(yaml).not.toContain('sk-ant-api03');
    expect(yaml).not.toContain(RAW_TOKEN);
    expect(JSON.stringify(answers?.[1]?.json)).toMatch(/\[REDACTED/);
  });

  it('serves the replay: the recorded sequence per endpoint, an HTTP-date Retry-After asking the same wait, then the reference gateway', async () => {
    const gateway = createGateway();
    gateway.useScenario(convert(INCIDENT).scenario);
    const token = gateway.mintToken('agent-early'); // any agent: the recording has one
    const first = await search(gateway, token, 'a');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ results: [] });
    expect(first.headers.get('set-cookie')).toBeNull();
    const second = await search(gateway, token, 'b');
    expect(second.status).toBe(429);
    const date = Date.parse(second.headers.get('date') as string);
    const until = Date.parse(second.headers.get('retry-after') as string);
    // Recorded: 10 s after the recorded answer's Date; replayed: 10 s after this gateway's Date.
    expect(until - date).toBe(10_000);
    expect(gateway.journal.list().at(-1)?.retry_after_ms).toBe(10_000);
    expect(second.headers.get('ratelimit')).toBe('"calls";r=0;t=7');
    const entry = gateway.journal.list().at(-1);
    expect(entry).toMatchObject({
      status: 429,
      code: 'rate_limited',
      replay: `${UNNAMED_AGENT}#2`,
      query: 'b',
    });
    // Beyond the recording: the reference gateway (agent-early may not search: 403).
    expect((await search(gateway, token, 'c')).status).toBe(403);
    // The recorded fetch was a dropped connection (in process: a network error, status 0).
    const dropped = await call(gateway, 'POST', '/v1/web/fetch', {
      token,
      body: { url: 'https://a.example/' },
    });
    expect(dropped.status).toBe(0);
    expect(gateway.journal.list().at(-1)).toMatchObject({ status: 0, replay: `${UNNAMED_AGENT}#1` });
    // A reset replays from the start again.
    gateway.reset();
    gateway.useScenario(convert(INCIDENT).scenario);
    expect((await search(gateway, gateway.mintToken('agent-verified'), 'a')).status).toBe(200);
  });

  it('loads through the admin API inline (what admin scenarios load FILE sends), starting a clock epoch', async () => {
    const gateway = createGateway({ adminKey: 'replay-admin-key' });
    const loaded = await call(gateway, 'POST', '/__admin/scenario', {
      headers: { 'x-admin-key': 'replay-admin-key' },
      body: { scenario: convert(INCIDENT).scenario },
    });
    expect(loaded.status, loaded.text).toBe(200);
    // The clock starts at the recording's start, in its past: a new epoch, running.
    expect(loaded.body.clock).toMatchObject({ frozen: false, epoch: 1 });
    const token = gateway.mintToken('agent-verified');
    expect((await search(gateway, token, 'a')).status).toBe(200);
    expect((await search(gateway, token, 'b')).status).toBe(429);
    const bad = await call(gateway, 'POST', '/__admin/scenario', {
      headers: { 'x-admin-key': 'replay-admin-key' },
      body: { scenario: { name: 'x', description: 'x', replay: { recorded_at: 'never', agents: {} } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/replay\.recorded_at/);
  });

  it('maps several recorded agents by id, or as the agent map says', async () => {
    const ndjson = [
      { seq: 1, at: START, path: '/v1/whoami', operation: 'whoami', status: 200, agent: 'bot-a' },
      {
        seq: 2,
        at: START + 5,
        path: '/v1/whoami',
        operation: 'whoami',
        status: 429,
        agent: 'bot-b',
        code: 'rate_limited',
        retry_after: '3',
      },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n');
    const { scenario, warnings } = convert(ndjson, 'run.ndjson', { 'agent-verified': 'bot-b' });
    expect(Object.keys(scenario.replay?.agents ?? {})).toEqual(['bot-a', 'bot-b']);
    expect(warnings.join('\n')).toMatch(/without headers/);
    const gateway = createGateway();
    gateway.useScenario(scenario);
    const mapped = await call(gateway, 'GET', '/v1/whoami', { token: gateway.mintToken('agent-verified') });
    expect(mapped.status).toBe(429);
    expect(mapped.headers.get('retry-after')).toBe('3');
    expect(mapped.body).toMatchObject({ code: 'rate_limited' });
    // Not mapped and not a recorded id: the reference gateway.
    expect(
      (await call(gateway, 'GET', '/v1/whoami', { token: gateway.mintToken('agent-early') })).status,
    ).toBe(200);
    expect(() => convert(ndjson, 'run.ndjson', { 'agent-verified': 'bot-z' })).toThrow(
      /no recorded agent "bot-z"/,
    );
  });

  it('replays a body the recording cut as the text kept, and says so; a whole JSON body is JSON whatever size was written', () => {
    const line = (seq: number, body: string, bytes: number) =>
      JSON.stringify({
        seq,
        at: START + seq,
        path: '/v1/web/search',
        operation: 'web.search',
        status: 200,
        agent: 'agent-verified',
        exchange: {
          response_headers: [['content-type', 'application/json']],
          response_body: body,
          response_body_bytes: bytes,
        },
      });
    const { scenario, warnings } = convert(
      [line(1, '{"results":[{"title":"a', 5000), line(2, '{"results":[]}', 9000)].join('\n'),
      'cut.ndjson',
    );
    const answers = scenario.replay?.agents['agent-verified'];
    expect(answers?.[0]).toMatchObject({ body: '{"results":[{"title":"a' });
    expect(answers?.[1]).toMatchObject({ json: { results: [] } });
    expect(warnings).toEqual([
      expect.stringMatching(/^1 answer body\(ies\) were cut by the recording .* e\.g\. line 1:/),
    ]);
  });

  it.each([
    ['an empty file', '', /the file is empty/],
    ['not JSON at all', 'hello', /neither a HAR 1.2 file/],
    ['a HAR without entries', '{"log":{"version":"1.2"}}', /log\.entries: .*expected array/i],
    [
      'a HAR entry without a status',
      foreignHar([{ startedDateTime: iso(0), request: { method: 'GET', url: '/v1/whoami' }, response: {} }]),
      /log\.entries\[0\]\.response\.status/,
    ],
    [
      'a bad date',
      foreignHar([{ ...foreignEntry(0, '/v1/whoami', 200, [], '{}'), startedDateTime: 'yesterday' }]),
      /startedDateTime: must be an ISO 8601 date-time/,
    ],
    [
      'a broken NDJSON line',
      '{"seq":1,"at":1,"path":"/v1/whoami","operation":"whoami","status":200,"agent":"a"}\n{oops',
      /line 2: not JSON/,
    ],
    [
      'nothing to replay',
      foreignHar([foreignEntry(0, '/v1/health', 200, [], '{}')]),
      /no answer to whoami, web search or web fetch/,
    ],
  ])('refuses %s with a clear error naming the place', (_what, text, message) => {
    let error: unknown;
    try {
      convert(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^Invalid recording incident\.har:/);
    expect((error as Error).message).toMatch(message);
  });

  it('the command prints the scenario, and a bad file in one line with exit 2, never a stack trace', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'replay-convert-'));
    writeFileSync(join(dir, 'good.har'), INCIDENT);
    writeFileSync(join(dir, 'bad.har'), '{"log":{"entries":[{"startedDateTime":"x"}]}}');
    const good = await runCli(['scenario', 'from-har', join(dir, 'good.har')]);
    expect(good.code, good.stderr).toBe(0);
    expect((parse(good.stdout) as ScenarioInput).replay?.agents[UNNAMED_AGENT]).toHaveLength(3);
    expect(good.stderr).toMatch(/note: left out 1 exchange\(s\): health/);
    const bad = await runCli(['scenario', 'from-har', join(dir, 'bad.har')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agent-gateway: Invalid recording .*bad\.har:\n {2}- log\.entries\[0\]/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const missing = await runCli(['scenario', 'from-har', join(dir, 'none.har')]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/Cannot read .*none\.har: no such file/),
    });
    const map = await runCli(['scenario', 'from-har', join(dir, 'good.har'), '--agent-map', 'oops']);
    expect(map).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--agent-map takes calling=recorded pairs/),
    });
  }, 60_000);
});
