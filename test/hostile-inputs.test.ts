import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MAX_RECORDING_BYTES } from '../cli/commands/scenario.ts';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { loadConfig } from '../mock-server/config/load-config.ts';
import { MAX_TOOLS } from '../mock-server/config/schema.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { KEPT_BODY_BYTES, MAX_JSON_NESTING } from '../mock-server/scenarios/replay-convert.ts';
import type { ScenarioInput } from '../mock-server/scenarios/scenarios.ts';
import { runCli } from './support/cli.ts';

/*
 * Bad input is one line, never a crash: hostile recordings given to the real `agent-gateway` process. The
 * large inputs are written to a temporary folder and removed; none is committed.
 */

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'hostile-inputs-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A HAR of one whoami answer whose body text is written in chunks (never held whole by the test). */
function harWithBody(file: string, chunks: Iterable<string>, size: number) {
  const entry = {
    startedDateTime: '2026-01-01T00:00:00Z',
    request: {
      method: 'GET',
      url: 'https://gw.example/v1/whoami',
      headers: [{ name: 'X-Agent-Identity', value: 't' }],
    },
    response: { status: 200, headers: [], content: { size, mimeType: 'application/json', text: '@BODY@' } },
  };
  const [before, after] = JSON.stringify({ log: { version: '1.2', entries: [entry] } }).split('"@BODY@"') as [
    string,
    string,
  ];
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, `${before}"`);
    for (const chunk of chunks) writeSync(fd, chunk);
    writeSync(fd, `"${after}`);
  } finally {
    closeSync(fd);
  }
}

/** One line of error (the recording error's own list aside), exit 2, never a stack trace. */
const expectRefusal = (result: { code: number; stderr: string }, message: RegExp) => {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at |RangeError|FATAL|heap/);
};

describe('scenario from-har on hostile recordings', () => {
  it('a body far past what a scenario keeps: only its start is read, and the scenario says so', async () => {
    const file = join(dir, 'large-body.har');
    const mb = 'x'.repeat(1024 * 1024);
    harWithBody(
      file,
      (function* () {
        for (let i = 0; i < 24; i++) yield mb;
      })(),
      24 * mb.length,
    );
    const result = await runCli(['scenario', 'from-har', file], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`the scenario keeps its first ${KEPT_BODY_BYTES}`);
    const scenario = parse(result.stdout) as ScenarioInput;
    const answer = scenario.replay?.agents['recorded-agent']?.[0];
    expect(answer?.body?.length).toBe(KEPT_BODY_BYTES);
  }, 180_000);

  it('a file over the stated cap is refused before it is read', async () => {
    const file = join(dir, 'over-cap.har');
    writeFileSync(file, '{"log":');
    // Sparse: no disk or memory spent on the bytes the refusal never reads.
    truncateSync(file, MAX_RECORDING_BYTES + 1);
    const result = await runCli(['scenario', 'from-har', file]);
    expectRefusal(
      result,
      new RegExp(`^agent-gateway: Cannot read .*over-cap\\.har: larger than ${MAX_RECORDING_BYTES} bytes`),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a 100,000-deep JSON body is kept as text; as deep in the HAR or a journal line, no crash either', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const body = join(dir, 'deep-body.har');
    harWithBody(body, [deep], deep.length);
    const kept = await runCli(['scenario', 'from-har', body]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toContain(`nests deeper than ${MAX_JSON_NESTING} arrays or objects: kept as text`);
    expect((parse(kept.stdout) as ScenarioInput).replay?.agents['recorded-agent']?.[0]?.body).toBe(deep);

    const inHar = join(dir, 'deep-har.har');
    writeFileSync(inHar, `{"log":{"version":"1.2","_x":${deep},"entries":[]}}`);
    expectRefusal(
      await runCli(['scenario', 'from-har', inHar]),
      /no answer to whoami, web search or web fetch/,
    );

    const line = join(dir, 'deep-line.ndjson');
    writeFileSync(line, `{"seq":1,"x":${deep}}\n`);
    expectRefusal(await runCli(['scenario', 'from-har', line]), /Invalid recording .*deep-line\.ndjson/);
  }, 120_000);
});

describe("an extra tool's fixture is read only from inside the config's folder", () => {
  const configWith = (name: string, fixture: string) => {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, 'gateway.yaml');
    writeFileSync(
      file,
      `tools:\n  docs.lookup:\n    path: /v1/docs/lookup\n    tiers: [verified]\n    answer: { fixture: ${JSON.stringify(fixture)} }\n`,
    );
    return { folder, file };
  };

  it('refuses at start, exit 2 in one line: an absolute path elsewhere, a way up, a link leading out', async () => {
    writeFileSync(join(dir, 'outside.json'), '{"secret":"outside-the-folder"}');
    const cases = [
      configWith('absolute', '/proc/self/environ'),
      configWith('up', '../outside.json'),
      (() => {
        const made = configWith('linked', 'answers/env.json');
        mkdirSync(join(made.folder, 'answers'));
        symlinkSync('/proc/self/environ', join(made.folder, 'answers', 'env.json'));
        return made;
      })(),
    ];
    for (const { file } of cases) {
      const result = await runCli(['serve', '--port', '0', '--config', file], { timeoutMs: 30_000 });
      expectRefusal(
        result,
        /tools\.docs\.lookup\.answer\.fixture: must be a file inside the config's folder/,
      );
      expect(result.stdout).not.toMatch(/listening on/);
    }
  }, 120_000);

  it('a fixture below the config folder is served', async () => {
    const { folder, file } = configWith('inside', 'answers/lookup.json');
    mkdirSync(join(folder, 'answers'));
    writeFileSync(join(folder, 'answers', 'lookup.json'), '{"title":"inside"}');
    const gateway = createGateway({ configFile: file, adminKey: 'hostile-admin-key' });
    const token = gateway.mintToken('agent-verified');
    const res = await gateway.fetch(
      new Request('http://gw.test/v1/docs/lookup', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-identity': token },
        body: '{"q":"x"}',
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ title: 'inside' });
  });
});

describe('malformed framing through the proxy is refused at the proxy, as the gateway refuses it', () => {
  const ADMIN = 'hostile-framing-admin';
  let gateway: ServeProcess;
  let proxy: ServeProcess;
  let token = '';
  beforeAll(async () => {
    gateway = await spawnServe([], { env: { AGENT_GATEWAY_ADMIN_KEY: ADMIN } });
    proxy = await spawnServe(['--target', gateway.url], {
      command: 'proxy',
      env: { AGENT_GATEWAY_ADMIN_KEY: ADMIN },
    });
    const minted = await fetch(`${gateway.url}/__admin/agents/agent-verified/tokens`, {
      method: 'POST',
      headers: { 'x-admin-key': ADMIN },
    });
    token = ((await minted.json()) as { token: string }).token;
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await gateway?.stop();
  });

  /** Raw bytes on a fresh connection; what came back once the server closed it (or after `waitMs`). */
  const rawExchange = (url: string, bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
      socket.write(bytes);
    });

  it('a chunk size line ending in a bare LF: 400 invalid_request from both, never a 502 blamed on the target', async () => {
    const request = (base: string) =>
      `POST /v1/web/search HTTP/1.1\r\nHost: ${new URL(base).host}\r\nX-Agent-Identity: ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n11\n{"query":"hello"}\n0\n\n`;
    const statusAndBody = (answer: string) => ({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]),
      body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>,
    });
    const direct = statusAndBody(await rawExchange(gateway.url, request(gateway.url)));
    const proxied = statusAndBody(await rawExchange(proxy.url, request(proxy.url)));
    expect(direct).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(proxied.status).toBe(400);
    expect(proxied.body).toMatchObject({ code: 'invalid_request', http_error: direct.body.http_error });
    // Journaled as the proxy's own refusal, not as the target's failure (no upstream fault, no finding).
    const journal = (await (
      await fetch(`${proxy.url}/__admin/journal`, { headers: { 'x-admin-key': ADMIN } })
    ).json()) as { entries: { status: number; fault?: string; findings?: unknown[] }[] };
    const entry = journal.entries.at(-1);
    expect(entry).toMatchObject({ status: 400, fault: 'proxy:bad_request' });
    expect(entry?.findings).toBeUndefined();
  }, 60_000);
});

describe('documents generated from the config stay bounded: a cap on tools', () => {
  const toolsConfig = (name: string, extra: number) => {
    const lines = ['tools:'];
    for (let i = 0; i < extra; i++) lines.push(`  extra.t${i}: { path: /v1/extra/t${i}, tiers: [verified] }`);
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const builtIn = Object.keys(loadConfig().tools).length;

  it('5,000 extra tools: refused at start, exit 2, naming the cap', async () => {
    const result = await runCli(['serve', '--port', '0', '--config', toolsConfig('many-tools.yaml', 5_000)], {
      timeoutMs: 60_000,
    });
    expectRefusal(
      result,
      new RegExp(
        `tools: at most ${MAX_TOOLS} tools, built-in ones included \\(${5_000 + builtIn} declared\\)`,
      ),
    );
    expect(result.stdout).not.toMatch(/listening on/);
  }, 90_000);

  it('at the cap, the OpenAPI document holds every tool and stays under 2 MB', async () => {
    const gateway = createGateway({ configFile: toolsConfig('cap-tools.yaml', MAX_TOOLS - builtIn) });
    const res = await gateway.fetch(new Request('http://gw.test/openapi.json'));
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain(`/v1/extra/t${MAX_TOOLS - builtIn - 1}`);
    expect(Buffer.byteLength(text)).toBeLessThan(2 * 1024 * 1024);
    expect(() =>
      createGateway({ configFile: toolsConfig('over-cap.yaml', MAX_TOOLS - builtIn + 1) }),
    ).toThrow(/at most 100 tools/);
  });
});
