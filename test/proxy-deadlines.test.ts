import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import type { RuleFindings } from '../mock-server/journal/answer-findings.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';
import { createProxy, type ProxyOptions } from '../mock-server/proxy/proxy.ts';

/*
 * Issue 31 point 5: the proxy's deadlines, against real loopback targets that misbehave (never answer, never
 * finish a TLS handshake, stall mid-body, never read the request, answer 101). Deadlines are small and passed
 * as options; nothing here asserts how long anything took (a loaded machine): only what the agent got, and
 * what the journal and the findings say happened.
 */

const ADMIN = 'deadline-test-admin-key';
const admin = { 'x-admin-key': ADMIN };
const SMALL = { connectTimeoutMs: 300, firstByteTimeoutMs: 300, idleTimeoutMs: 300 };

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** A raw TCP target: `onSocket` decides what (if anything) it ever writes. */
async function rawTarget(onSocket: (socket: Socket) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function startProxy(target: string, options: Partial<ProxyOptions> = SMALL) {
  const proxy = createProxy({ target, adminKey: ADMIN, log: () => {}, ...options });
  const server = await serve(proxy, { port: 0, log: () => {} });
  closers.push(
    () => server.close(),
    () => proxy.close(),
  );
  return { proxy, url: server.url };
}

const journalOf = async (url: string) =>
  ((await (await fetch(`${url}/__admin/journal`, { headers: admin })).json()) as { entries: JournalEntry[] })
    .entries;
const findingsOf = async (url: string) =>
  ((await (await fetch(`${url}/__admin/findings`, { headers: admin })).json()) as { rules: RuleFindings[] })
    .rules;

describe('the proxy has deadlines on the target', () => {
  it('a target that never answers: the agent gets a JSON 504 upstream_timeout, journaled, and a finding', async () => {
    const target = await rawTarget((socket) => socket.resume()); // reads everything, says nothing
    const { url } = await startProxy(`http://${target}`);
    const response = await fetch(`${url}/v1/web/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-identity': 'some-token' },
      body: JSON.stringify({ query: 'never answered' }),
    });
    expect(response.status).toBe(504);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      code: 'upstream_timeout',
      proxy: true,
      deadline: 'first byte',
      deadline_ms: 300,
    });
    const [entry] = (await journalOf(url)).filter((e) => e.operation === 'web.search');
    expect(entry).toMatchObject({ status: 504, code: 'upstream_timeout', fault: 'proxy:first_byte_timeout' });
    expect(entry?.findings?.[0]?.rule).toBe('target.answers-in-time');
    const rules = await findingsOf(url);
    expect(rules.map((r) => r.id)).toEqual(['target.answers-in-time']);
    expect(rules[0]?.exchanges[0]?.detail).toMatch(/first byte deadline/);
  });

  it('a TLS target that accepts the connection but never completes the handshake: connect deadline, 504', async () => {
    const target = await rawTarget((socket) => socket.resume());
    const { url } = await startProxy(`https://${target}`);
    const response = await fetch(`${url}/v1/health`);
    expect(response.status).toBe(504);
    expect(((await response.json()) as { deadline: string }).deadline).toBe('connect');
    const [entry] = await journalOf(url);
    expect(entry).toMatchObject({ status: 504, fault: 'proxy:connect_timeout' });
    expect(entry?.findings?.[0]?.detail).toMatch(/connect deadline/);
  });

  it('a target that stalls mid-body: the answer is cut off (the agent sees the connection end), journaled and found', async () => {
    const target = await rawTarget((socket) => {
      socket.once('data', () =>
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"results":[',
        ),
      );
    });
    const { url } = await startProxy(`http://${target}`);
    const response = await fetch(`${url}/v1/health`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    // The entry is written once the proxy has closed the agent's connection.
    let entry: JournalEntry | undefined;
    for (let i = 0; i < 100 && !entry; i++) {
      entry = (await journalOf(url))[0];
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(entry).toMatchObject({ status: 0, fault: 'proxy:idle_timeout' });
    expect(entry?.findings?.[0]).toMatchObject({ rule: 'target.answers-in-time' });
    expect(entry?.findings?.[0]?.detail).toMatch(/status 200 and 12 bytes of body, then nothing for 300 ms/);
  });

  it('a target that never reads the request body: idle deadline while sending, 504', async () => {
    const target = await rawTarget(() => {}); // never reads: the socket's buffers fill
    const { url } = await startProxy(`http://${target}`);
    const big = Buffer.alloc(32 * 1024 * 1024, 0x61);
    const response = await fetch(`${url}/v1/upload`, { method: 'POST', body: big }).catch(
      (error: Error) => error,
    );
    // The proxy answers 504 before the agent has sent it all; a client may see the answer or, having
    // been cut off while still sending, an error. Either way the journal says what happened.
    if (response instanceof Response) expect(response.status).toBe(504);
    let entry: JournalEntry | undefined;
    for (let i = 0; i < 100 && !entry; i++) {
      entry = (await journalOf(url))[0];
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(entry?.fault).toBe('proxy:idle_timeout');
    expect(entry?.findings?.[0]?.detail).toMatch(/took none of the request's body/);
  });

  it('an agent that resets its connection before the target answers: journaled as dropped, the target request abandoned', async () => {
    let arrived: () => void = () => {};
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let abandoned: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      abandoned = resolve;
    });
    const target = await rawTarget((socket) => {
      socket.once('data', () => arrived());
      socket.once('close', () => abandoned());
    });
    const { url } = await startProxy(`http://${target}`, { ...SMALL, firstByteTimeoutMs: 600_000 });
    // A reset, not a FIN: a half-closed client still gets its answer (the server allows half-open sockets).
    const agent = connect(Number(new URL(url).port), '127.0.0.1', () =>
      agent.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n'),
    );
    agent.on('error', () => {});
    await reached;
    agent.resetAndDestroy();
    await closed;
    let entry: JournalEntry | undefined;
    for (let i = 0; i < 100 && !entry; i++) {
      entry = (await journalOf(url))[0];
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(entry).toMatchObject({ status: 0, fault: 'proxy:agent_gone' });
    expect(entry?.findings).toBeUndefined();
  });

  it('the defaults are in force without options, and options are checked', async () => {
    const { proxy } = await startProxy('http://127.0.0.1:9', {});
    expect(proxy.deadlines).toEqual({
      connectTimeoutMs: 5000,
      firstByteTimeoutMs: 30000,
      idleTimeoutMs: 30000,
    });
    expect(() => createProxy({ target: 'http://127.0.0.1:9', connectTimeoutMs: 0 })).toThrow(
      /connectTimeoutMs/,
    );
  });
});

describe('the proxy refuses protocol upgrades', () => {
  const upgrading = (headers: string) =>
    rawTarget((socket) => {
      socket.once('data', () => socket.write(`HTTP/1.1 101 Switching Protocols\r\n${headers}\r\n`));
    });

  for (const [name, headers] of [
    ['with Upgrade and Connection headers', 'Upgrade: websocket\r\nConnection: Upgrade\r\n'],
    ['without them', ''],
  ] as const)
    it(`a target's 101 ${name} is a JSON 502 for the agent, journaled and found`, async () => {
      const target = await upgrading(headers);
      const { url } = await startProxy(`http://${target}`);
      const response = await fetch(`${url}/v1/whoami`, { headers: { 'x-agent-identity': 'tok' } });
      expect(response.status).toBe(502);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ code: 'upstream_error', proxy: true, target_status: 101 });
      const entry = (await journalOf(url)).find((e) => e.operation === 'whoami');
      expect(entry).toMatchObject({ status: 502, fault: 'proxy:upgrade_refused' });
      expect((await findingsOf(url)).map((r) => r.id)).toEqual(['target.no-upgrade']);
    });

  it("an agent's Upgrade request is forwarded as plain HTTP, without Upgrade: the target never sees it", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const target = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    closers.push(() => {
      target.closeAllConnections();
      return new Promise<void>((resolve) => target.close(() => resolve()));
    });
    const { url } = await startProxy(`http://127.0.0.1:${(target.address() as { port: number }).port}`);
    // Raw: fetch will not send an Upgrade header.
    const raw = await new Promise<string>((resolve) => {
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(
          'GET /v1/health HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n',
        ),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('{"ok":true}')) {
          socket.destroy();
          resolve(text);
        }
      });
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    const last = seen.at(-1);
    expect(last?.upgrade).toBeUndefined();
    expect(last?.connection ?? '').not.toMatch(/upgrade/i);
  });
});
