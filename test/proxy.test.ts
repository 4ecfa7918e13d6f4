import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/index.ts';
import { CLI_ENTRY, type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { ANSWER_RULES, type RuleFindings } from '../mock-server/journal/answer-findings.ts';
import type { Har } from '../mock-server/journal/har.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';

/*
 * Proxy mode with real processes: `agent-gateway proxy` in front of `agent-gateway serve`. What the agent
 * gets must be what the gateway answered (hop-by-hop headers apart); the proxy's journal must carry the
 * facts the client report grades (connection, which request on it, the agent by whoami), and never a token.
 */

const ADMIN = 'proxy-test-admin-key';
const admin = { 'x-admin-key': ADMIN };

describe('agent-gateway proxy in front of agent-gateway serve (two processes)', () => {
  let target: ServeProcess;
  let proxy: ServeProcess;
  let token: string;
  let earlyToken: string;

  beforeAll(async () => {
    target = await spawnServe(['--admin-key', ADMIN]);
    proxy = await spawnServe(['--target', target.url, '--admin-key', ADMIN], { command: 'proxy' });
    const mint = async (agent: string) =>
      (
        (await (
          await fetch(`${target.url}/__admin/agents/${agent}/tokens`, { method: 'POST', headers: admin })
        ).json()) as { token: string }
      ).token;
    token = await mint('agent-verified');
    earlyToken = await mint('agent-early');
  }, 90_000);

  afterAll(async () => {
    await proxy?.stop();
    await target?.stop();
  });

  const search = (
    base: string,
    query: string,
    headers: Record<string, string> = { 'x-agent-identity': token },
  ) =>
    fetch(`${base}/v1/web/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
  const comparable = (response: Response) =>
    Object.fromEntries(
      // Hop-by-hop headers are each hop's own (the gateway may close after an early answer; the proxy need not).
      [...response.headers].filter(
        ([name]) => !['date', 'x-request-id', 'ratelimit', 'keep-alive', 'connection'].includes(name),
      ),
    );

  it('passes answers through unchanged: status, headers and body as the gateway gave them', async () => {
    const direct = await search(target.url, 'agent tool gateway');
    const proxied = await search(proxy.url, 'agent tool gateway');
    expect(proxied.status).toBe(direct.status);
    expect(comparable(proxied)).toEqual(comparable(direct));
    expect(await proxied.text()).toBe(await direct.text());
    // An error answer too, with its WWW-Authenticate.
    const refusedDirect = await search(target.url, 'x', {});
    const refused = await search(proxy.url, 'x', {});
    expect(refused.status).toBe(401);
    expect(comparable(refused)).toEqual(comparable(refusedDirect));
    const [a, b] = [
      (await refused.json()) as Record<string, unknown>,
      (await refusedDirect.json()) as Record<string, unknown>,
    ];
    expect({ ...a, request_id: 0 }).toEqual({ ...b, request_id: 0 });
    // The agent sees the gateway's request id, and the journal records it under that id.
    expect(refused.headers.get('x-request-id')).toBe(a.request_id);
  });

  it("journals each exchange with serve's connection facts and the agent the target's whoami names", async () => {
    await fetch(`${proxy.url}/__admin/journal`, { method: 'DELETE', headers: admin });
    await fetch(`${proxy.url}/v1/health`);
    await fetch(`${proxy.url}/v1/whoami`, { headers: { 'x-agent-identity': earlyToken } });
    await search(proxy.url, 'first');
    await search(proxy.url, 'second');
    const journal = (await (await fetch(`${proxy.url}/__admin/journal`, { headers: admin })).json()) as {
      entries: JournalEntry[];
    };
    // The proxy's own NDJSON export streams the same entries.
    const exported = await (await fetch(`${proxy.url}/__admin/journal/export`, { headers: admin })).text();
    expect(
      exported
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual(journal.entries);
    const byOperation = journal.entries.map((e) => [e.operation, e.agent, e.status]);
    expect(byOperation).toEqual([
      ['health', undefined, 200],
      ['whoami', 'agent-early', 200],
      ['web.search', 'agent-verified', 200],
      ['web.search', 'agent-verified', 200],
    ]);
    for (const e of journal.entries) {
      expect(e.connection).toBeTypeOf('number');
      expect(e.connection_seq).toBeGreaterThanOrEqual(1);
      expect(e.written_ms).toBeGreaterThanOrEqual(e.real_ms);
      // The gateway's turn facts too, so the report tells a reaction from a request on its way alike on both
      // paths: the proxy wrote each answer while it read the target's, a turn after it read the request.
      expect(e.read_turn).toBeTypeOf('number');
      expect(e.opened_turn).toBeTypeOf('number');
      expect(e.written_turn).toBeGreaterThan(e.read_turn as number);
    }
    const searches = journal.entries.filter((e) => e.operation === 'web.search');
    expect(searches.map((e) => e.query)).toEqual(['first', 'second']);
    expect(searches[0]?.request_key).toBeTypeOf('string');
    expect(searches[0]?.request_key).not.toBe(searches[1]?.request_key);
    // The gateway's own journal has the same requests under the same ids.
    const theirs = (await (await fetch(`${target.url}/__admin/journal`, { headers: admin })).json()) as {
      entries: JournalEntry[];
    };
    for (const e of journal.entries) expect(theirs.entries.map((t) => t.request_id)).toContain(e.request_id);
  });

  it('grades the agent through the report command, and applies faults to proxied traffic', async () => {
    // The proxy has named the token by then (a whoami of its own the first time it sees a token).
    await fetch(`${proxy.url}/v1/whoami`, { headers: { 'x-agent-identity': token } });
    await fetch(`${proxy.url}/__admin/journal`, { method: 'DELETE', headers: admin });
    const armed = await fetch(`${proxy.url}/__admin/faults`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        kind: 'status',
        status: 503,
        retry_after: 2,
        count: 1,
        match: { operation: 'web.search', agent: 'agent-verified' },
      }),
    });
    expect(armed.status).toBe(201);
    const before = (await (await fetch(`${target.url}/__admin/journal`, { headers: admin })).json()) as {
      entries: JournalEntry[];
    };
    const struck = await search(proxy.url, 'fault me');
    expect(struck.status).toBe(503);
    expect(struck.headers.get('retry-after')).toBe('2');
    expect(((await struck.json()) as { code: string }).code).toBe('upstream_unavailable');
    // Retried after 300 ms, well within the Retry-After (and past the report's grace): the report says so.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await search(proxy.url, 'fault me')).status).toBe(200);
    const after = (await (await fetch(`${target.url}/__admin/journal`, { headers: admin })).json()) as {
      entries: JournalEntry[];
    };
    // The struck request never reached the target; the retry did.
    expect(after.entries.length - before.entries.length).toBe(1);
    const report = (await (
      await fetch(`${proxy.url}/__admin/report?agent=agent-verified`, { headers: admin })
    ).json()) as { violations: { rule: string }[]; requests: number };
    expect(report.requests).toBe(2);
    // The report grades both on the facts its rules read: the refusal's Retry-After, the retry's key.
    const { entries } = (await (await fetch(`${proxy.url}/__admin/journal`, { headers: admin })).json()) as {
      entries: JournalEntry[];
    };
    expect(entries.map((e) => [e.status, e.retry_after_ms, e.fault !== undefined])).toEqual([
      [503, 2000, true],
      [200, undefined, false],
    ]);
    expect(entries[0]?.request_key).toBe(entries[1]?.request_key);
  });

  it("never keeps a token: journal, HAR export and both processes' output", async () => {
    await search(proxy.url, `leak ${token}`);
    const journal = await (await fetch(`${proxy.url}/__admin/journal`, { headers: admin })).text();
    const har = (await (
      await fetch(`${proxy.url}/__admin/export?format=har`, { headers: admin })
    ).json()) as Har;
    expect(har.log.version).toBe('1.2');
    expect(har.log.entries.length).toBeGreaterThan(0);
    const entry = har.log.entries.findLast((e) => e.request.url.endsWith('/v1/web/search'));
    expect(entry?.request.headers.find((h) => h.name.toLowerCase() === 'x-agent-identity')?.value).toMatch(
      /^\[REDACTED:tok_[0-9a-f]{8}\]$/,
    );
    expect(entry?.response.content.text).toContain('"results"');
    const signature = token.split('.').at(-1) as string;
    for (const text of [journal, JSON.stringify(har), proxy.output(), target.output()]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(signature);
      expect(text).not.toContain(earlyToken);
    }
    // The secret scan knew the token it saw: the query holding it is journaled redacted and flagged.
    const leaked = (JSON.parse(journal) as { entries: JournalEntry[] }).entries.find((e) =>
      e.query?.startsWith('leak'),
    );
    expect(leaked?.secrets).toContain('own_identity_token');
  });
});

describe('the admin commands of proxy mode, as a user runs them', () => {
  it('admin clock set --frozen, admin findings and admin export --format har', async () => {
    const gateway = createGateway({ adminKey: ADMIN, log: () => {} });
    const server = await serve(gateway, { port: 0, log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const dir = mkdtempSync(join(tmpdir(), 'proxy-cli-'));
    try {
      await fetch(`${server.url}/v1/whoami`, { headers: { 'x-agent-identity': token } });
      const cli = (...args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            [CLI_ENTRY, 'admin', ...args, '--base-url', server.url],
            { env: { ...process.env, AGENT_GATEWAY_ADMIN_KEY: ADMIN }, timeout: 60_000 },
            (error, stdout, stderr) =>
              resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        });
      const set = await cli('clock', 'set', '2026-03-01T00:00:00Z', '--frozen', '--json');
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ time: '2026-03-01T00:00:00.000Z', frozen: true });
      expect(gateway.clock.now()).toBe(Date.parse('2026-03-01T00:00:00Z'));
      const findings = await cli('findings');
      expect([findings.code, findings.stdout]).toEqual([0, expect.stringMatching(/^No finding in 1 judged/)]);
      const out = join(dir, 'run.har');
      const exported = await cli('export', '--format', 'har', '--out', out);
      expect(exported.code, exported.stderr).toBe(0);
      const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
      expect(
        har.log.entries.map((e) => [
          e.request.method,
          e.request.url.endsWith('/v1/whoami'),
          e.response.status,
        ]),
      ).toEqual([['GET', true, 200]]);
      expect(readFileSync(out, 'utf8')).not.toContain(token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    }
  }, 180_000);
});

describe('proxy mode, in process over real sockets', () => {
  const running: { close(): Promise<void> | void }[] = [];
  afterAll(async () => {
    for (const r of running.reverse()) await r.close();
  });
  const start = async (targetUrl: string, config = {}) => {
    const proxy = createProxy({ target: targetUrl, adminKey: ADMIN, log: () => {}, config });
    const server = await serve(proxy, { port: 0, log: () => {} });
    running.push(server, { close: () => proxy.close() });
    return { proxy, server };
  };

  it('streams an answer as the target sends it, compressed bytes untouched, hop-by-hop headers dropped', async () => {
    let release: () => void = () => {};
    const secondChunk = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gz = gzipSync(Buffer.from('{"code":"x"}'));
    const upstream = createServer((req, res) => {
      if (req.url === '/gz') {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'x-custom': 'a',
        });
        res.end(gz);
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/plain',
        'keep-alive': 'timeout=99',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.write('first;');
      secondChunk.then(() => res.end('second'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    running.push({
      close: () =>
        new Promise<void>((resolve) => {
          upstream.closeAllConnections();
          upstream.close(() => resolve());
        }),
    });
    const { port } = upstream.address() as { port: number };
    const { server } = await start(`http://127.0.0.1:${port}`);
    const response = await fetch(`${server.url}/stream`);
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(response.headers.get('keep-alive')).not.toBe('timeout=99');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    // The first chunk arrives while the target still holds the second: nothing is buffered whole.
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('first;');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += Buffer.from(chunk.value).toString();
    expect(rest).toBe('second');
    // Raw bytes: a client that does not decode gets the target's gzip bytes exactly.
    const raw = await new Promise<Buffer>((resolve, reject) => {
      import('node:http').then(({ get }) =>
        get(`${server.url}/gz`, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject),
      );
    });
    expect(raw.equals(gz)).toBe(true);
  });

  it("a target that cannot be reached is a JSON 502 from the proxy, journaled as the proxy's", async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const { port } = dead.address() as { port: number };
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const { server, proxy } = await start(`http://127.0.0.1:${port}`);
    const response = await fetch(`${server.url}/v1/health`);
    expect(response.status).toBe(502);
    expect(((await response.json()) as { code: string }).code).toBe('upstream_error');
    const [entry] = proxy.gateway.journal.list();
    expect(entry?.fault).toBe('proxy:upstream');
    // Not the target's answer: never a finding against it.
    expect(entry?.findings).toBeUndefined();
  });

  it('names an agent whose whoami the target refuses by a stable fingerprint of its token', async () => {
    const gateway = createGateway({ log: () => {} });
    const target = await serve(gateway, { port: 0, log: () => {} });
    running.push(target);
    const { server, proxy } = await start(target.url);
    for (let i = 0; i < 2; i++)
      await fetch(`${server.url}/v1/web/search`, {
        method: 'POST',
        headers: { 'x-agent-identity': 'not-a-real-token', 'content-type': 'application/json' },
        body: '{"query":"q"}',
      });
    const entries = proxy.gateway.journal.list();
    expect(entries.map((e) => e.status)).toEqual([401, 401]);
    expect(entries[0]?.agent).toMatch(/^tok_[0-9a-f]{8}$/);
    expect(entries[1]?.agent).toBe(entries[0]?.agent);
    expect(entries[0]?.code).toBe('invalid_identity_token');
  });

  it('clock set with frozen is one step: the clock shows exactly the time set, however long after', async () => {
    const clock = createClock();
    const gateway = createGateway({ adminKey: ADMIN, clock, log: () => {} });
    const set = async (body: unknown) =>
      gateway.fetch(
        new Request('http://gw.test/__admin/clock/set', {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    const answer = (await (await set({ time: '2026-01-01T00:00:00Z', frozen: true })).json()) as {
      now: number;
      frozen: boolean;
    };
    expect(answer).toMatchObject({ now: Date.parse('2026-01-01T00:00:00Z'), frozen: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(clock.now()).toBe(Date.parse('2026-01-01T00:00:00Z'));
    // frozen: false lets it run on from the time set; absent keeps the state it had.
    await set({ time: 1_000_000_000_000 });
    expect(clock.frozen).toBe(true);
    expect(clock.now()).toBe(1_000_000_000_000);
    await set({ time: 1_000_000_000_000, frozen: false });
    expect(clock.frozen).toBe(false);
    expect(clock.now()).toBeGreaterThanOrEqual(1_000_000_000_000);
    expect((await set({ time: 'yesterday', frozen: true })).status).toBe(400);
  });

  it('lists no findings for answers that keep the rules, and the rule ids are those of the suite', async () => {
    const gateway = createGateway({ log: () => {} });
    const target = await serve(gateway, { port: 0, log: () => {} });
    running.push(target);
    const { server, proxy } = await start(target.url);
    await fetch(`${server.url}/v1/health`);
    await fetch(`${server.url}/v1/whoami`);
    await fetch(`${server.url}/v1/whoami`, { headers: { 'x-agent-identity': 'bad' } });
    const findings = (await (await fetch(`${server.url}/__admin/findings`, { headers: admin })).json()) as {
      judged: number;
      rules: RuleFindings[];
    };
    expect(findings).toEqual({ judged: 3, dropped: 0, rules: [] });
    expect(proxy.gateway.journal.list().length).toBe(3);
    // Same ids as the conformance suite's checks where they judge the same rule (the target.* rules judge the
    // target as a transport, which only the proxy sees: its deadlines, a 101).
    const suiteIds = new Set(CHECKS.map((c) => c.id));
    const judged = ANSWER_RULES.filter(
      (r) => r.id !== 'ratelimit.rate-limited-code' && !r.id.startsWith('target.'),
    );
    expect(judged.length).toBeGreaterThan(4);
    for (const rule of judged) expect(suiteIds, rule.id).toContain(rule.id);
  });
});
