import { Agent, createServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerSettings } from '../config/schema.ts';
import { ERROR_CATALOGUE } from '../errors.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import { NodeRequest } from './node/request.ts';
import { type RunningServer, serve } from './node-server.ts';

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const start = async (handler: (request: Request) => Promise<Response>, port = 0) => {
  const server = await serve({ fetch: handler }, { port });
  servers.push(server);
  return server;
};

describe('node server adapter', () => {
  it('serves the fetch handler on loopback and reports its URL', async () => {
    const server = await start(async (request) => Response.json({ path: new URL(request.url).pathname }));
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${server.url}/v1/x`);
    expect(await response.json()).toEqual({ path: '/v1/x' });
  });

  it('turns Response.error() into a dropped connection', async () => {
    const server = await start(async () => Response.error());
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest(`${server.url}/`, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      req.end();
    });
    expect(outcome).toBe('ECONNRESET');
  });

  it('a client that hangs up mid-upload is its own mistake: journaled 400, nothing logged as an error', async () => {
    const logged: string[] = [];
    const gateway = createGateway({ log: (line) => logged.push(line) });
    const server = await serve(gateway, { port: 0 });
    servers.push(server);
    const token = gateway.mintToken('agent-verified');
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/web/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `X-Agent-Identity: ${token}\r\nContent-Length: 100\r\n\r\n{"query":"ha`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const deadline = Date.now() + 5000;
    while (gateway.journal.list().length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gateway.journal.list().map((e) => [e.status, e.code])).toEqual([[400, 'invalid_request']]);
    expect(logged).toEqual([]);
  });

  it("the journal learns each request's connection and when its answer was written; fetch calls have none", async () => {
    const gateway = createGateway();
    const server = await serve(gateway, { port: 0 });
    servers.push(server);
    const get = (agent: Agent) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${server.url}/v1/health`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const another = new Agent({ keepAlive: false });
    try {
      await get(keepAlive);
      await get(keepAlive);
      await get(another);
    } finally {
      keepAlive.destroy();
      another.destroy();
    }
    await gateway.fetch(new Request('http://gw.test/v1/health'));
    const [first, second, third, inProcess] = gateway.journal.list();
    expect(first?.connection).toBeGreaterThan(0);
    expect(second?.connection).toBe(first?.connection);
    expect(second?.connection_opened_ms).toBe(first?.connection_opened_ms);
    expect(third?.connection).not.toBe(first?.connection);
    for (const entry of [first, second, third, inProcess]) {
      const e = entry as NonNullable<typeof entry>;
      // Written after it was built, which was after it arrived (all on one monotonic clock).
      expect(e.written_ms).toBeGreaterThanOrEqual(e.real_ms + e.duration_ms - 0.01);
    }
    expect((first?.connection_opened_ms ?? Infinity) <= (first?.real_ms ?? 0)).toBe(true);
    expect(inProcess?.connection).toBeUndefined();
  });

  it('writes an answer whose text is not ASCII with its length in bytes, whether encoded before or not', async () => {
    const gateway = createGateway();
    const server = await serve(gateway, { port: 0 });
    servers.push(server);
    const token = gateway.mintToken('agent-verified');
    const post = (body: string) =>
      fetch(`${server.url}/v1/web/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-identity': token },
        body,
      });
    // A tool answer (its bytes encoded once, shared), then an error answer (text only), each quoting "é".
    for (const [body, status] of [
      [JSON.stringify({ query: 'café crème' }), 200],
      ['{"query": é}', 400],
    ] as const) {
      const response = await post(body);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(status);
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      expect(bytes.toString('utf8')).toContain('é');
      expect(() => JSON.parse(bytes.toString('utf8'))).not.toThrow();
    }
  });

  it('a tool call whose body came with its headers is answered in the turn it was read, and its connection kept', async () => {
    const gateway = createGateway();
    const server = await serve(gateway, { port: 0 });
    servers.push(server);
    const token = gateway.mintToken('agent-verified');
    const body = JSON.stringify({ query: 'agent tool gateway' });
    const call = `POST /v1/web/search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-agent-identity: ${token}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    const answers = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if ((received.match(/HTTP\/1\.1 /g) ?? []).length >= n && /\}$/.test(received)) resolve();
        };
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString();
          check();
        });
        socket.on('error', reject);
        socket.on('close', () => reject(new Error(`closed after: ${received}`)));
      });
    const both = answers(2);
    // Each request in one write: its body arrives with its headers.
    socket.write(call, () => socket.write(call));
    await both;
    socket.destroy();
    expect(received.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(received).not.toMatch(/connection: close/i);
    const [first, second] = gateway.journal.list();
    expect(second?.connection).toBe(first?.connection);
  });

  it('a body that came with its headers is read without a wait, in the microtask after the request event', async () => {
    const seen: { arrived?: string; complete: boolean }[] = [];
    const plain = createServer((req, res) => {
      const request = new NodeRequest(req, res, undefined);
      queueMicrotask(() => {
        const arrived = request.arrivedBody(1000);
        seen.push({ arrived: arrived && Buffer.from(arrived).toString(), complete: request.complete });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = plain.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      const answered = new Promise<void>((resolve) => socket.on('data', () => resolve()));
      socket.write('POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 7\r\n\r\n{"a":1}');
      await answered;
      socket.destroy();
    } finally {
      plain.close();
    }
    expect(seen).toEqual([{ arrived: '{"a":1}', complete: true }]);
  });

  it('fails with EADDRINUSE when the port is taken', async () => {
    const first = await start(async () => new Response('x'));
    await expect(serve({ fetch: async () => new Response('y') }, { port: first.port })).rejects.toMatchObject(
      {
        code: 'EADDRINUSE',
      },
    );
  });
});

/** A raw connection: what it was answered (bytes as text) and whether the server closed it. */
interface RawConnection {
  socket: Socket;
  received(): string;
  closed: Promise<void>;
}
function rawConnection(port: number, send?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.once('connect', () => {
      if (send !== undefined) socket.write(send, 'latin1');
      resolve({ socket, received: () => received, closed });
    });
    socket.once('error', reject);
  });
}

/** Sends `send` (if anything) on a raw connection; once the server has closed it, what it was answered. */
async function answerTo(port: number, send?: string) {
  const connection = await rawConnection(port, send);
  await connection.closed;
  return parseAnswer(connection.received());
}
/** The request line and headers of an agent's JSON search, to be followed by framing headers and the body. */
const searchHead = (token: string) =>
  `POST /v1/web/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Agent-Identity: ${token}\r\n`;

/** Status, headers and JSON body of one raw HTTP/1.1 answer. */
function parseAnswer(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: JSON.parse(body) as Record<string, unknown>,
  };
}

const hardened = async (server: Partial<ServerSettings>, gateway?: Gateway) => {
  const gw = gateway ?? createGateway({ config: { server } });
  const running = await serve(gw, { port: 0, server });
  servers.push(running);
  return { gateway: gw, server: running };
};

describe('node server adapter: what the HTTP parser refuses is answered in JSON', () => {
  const cases: [string, string, number, string][] = [
    ['an unknown method', 'FOO@ / HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    ['a bad request target', 'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    [
      'a control byte in a header',
      'GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n',
      400,
      'invalid_request',
    ],
    [
      'a header name with a space',
      'GET /v1/health HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n',
      400,
      'invalid_request',
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /v1/web/search HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'invalid_request',
    ],
    [
      'two different Content-Lengths',
      'POST /v1/web/search HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
      400,
      'invalid_request',
    ],
    ['an HTTP/1.1 request without Host', 'GET /v1/health HTTP/1.1\r\n\r\n', 400, 'invalid_request'],
    [
      'an HTTP/2 preface (PRI), which Node closes at once',
      'PRI /v1/whoami\r\nHost: x\r\n\r\n',
      400,
      'invalid_request',
    ],
    ['the HTTP/2 connection preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'invalid_request'],
    ['not HTTP at all', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n', 400, 'invalid_request'],
    [
      'headers over the limit',
      `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'request_header_fields_too_large',
    ],
  ];

  it.each(cases)(
    '%s: the catalogue status and code, a request id, then the connection closes',
    async (_what, raw, status, code) => {
      const { server } = await hardened({});
      const answer = await answerTo(server.port, raw);
      expect([answer.status, answer.body.code]).toEqual([status, code]);
      expect(ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json');
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.body.request_id).toBe(answer.headers['x-request-id']);
      expect(answer.headers.connection).toBe('close');
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    },
  );

  it('a broken chunk in a body the core is reading is answered by the core: 400 JSON, journaled', async () => {
    const { gateway, server } = await hardened({});
    const token = gateway.mintToken('agent-verified');
    const answer = await answerTo(
      server.port,
      `${searchHead(token)}Transfer-Encoding: chunked\r\n\r\n5\r\n{"que\r\nzz\r\n`,
    );
    expect([answer.status, answer.body.code, answer.body.http_error]).toEqual([
      400,
      'invalid_request',
      'HPE_INVALID_CHUNK_SIZE',
    ]);
    expect(gateway.journal.list().map((e) => [e.status, e.code, e.agent])).toEqual([
      [400, 'invalid_request', 'agent-verified'],
    ]);
  });

  it('a chunked body sent whole with its headers is read as one body; past the limit it is a 413, journaled', async () => {
    const { gateway, server } = await hardened({ max_body_bytes: 1024 });
    const token = gateway.mintToken('agent-verified');
    const chunked = (text: string, size: number) => {
      let out = '';
      for (let i = 0; i < text.length; i += size) {
        const piece = text.slice(i, i + size);
        out += `${piece.length.toString(16)}\r\n${piece}\r\n`;
      }
      return `${out}0\r\n\r\n`;
    };
    const send = (body: string) =>
      answerTo(
        server.port,
        `${searchHead(token)}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(body, 7)}`,
      );
    // In pieces of 7 bytes: the body is the pieces joined, whichever way the adapter reads them.
    expect(await send('{"query":"in pieces","count":2}')).toMatchObject({
      status: 200,
      body: { query: 'in pieces', count: 2 },
    });
    const large = await send(`{"query":"${'x'.repeat(1100)}"}`);
    expect([large.status, large.body.code]).toEqual([413, 'payload_too_large']);
    expect(gateway.journal.list().map((e) => [e.status, e.code ?? null, e.query ?? null])).toEqual([
      [200, null, 'in pieces'],
      [413, 'payload_too_large', null],
    ]);
  });

  it('a client that half-closes after its request still gets an answer that takes a while', async () => {
    const gateway = createGateway({ config: { tools: { 'web.search': { latency_ms: 50 } } } });
    const { server } = await hardened({}, gateway);
    const token = gateway.mintToken('agent-verified');
    const body = '{"query":"half-closed"}';
    const connection = await rawConnection(
      server.port,
      `${searchHead(token)}Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    connection.socket.end();
    await connection.closed;
    expect(parseAnswer(connection.received())).toMatchObject({ status: 200, body: { query: 'half-closed' } });
  });

  it('an Expect other than 100-continue is ignored (RFC 9110 section 10.1.1), not a bodiless 417', async () => {
    const { server } = await hardened({});
    expect(
      await answerTo(
        server.port,
        'GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
      ),
    ).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it("CONNECT gets the core's JSON answer, not a silent close", async () => {
    const { server } = await hardened({});
    for (const target of ['example.com:443', '/v1/health']) {
      const answer = await answerTo(server.port, `CONNECT ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect([target, answer.status, answer.body.code]).toEqual(
        target === '/v1/health' ? [target, 405, 'method_not_allowed'] : [target, 404, 'not_found'],
      );
    }
  });
});

describe('node server adapter: timeouts and the connection cap', () => {
  it('a connection that sends nothing is answered 408 and closed after the headers timeout', async () => {
    const { server } = await hardened({ headers_timeout_ms: 300, request_timeout_ms: 60_000 });
    const answer = await answerTo(server.port);
    expect([answer.status, answer.body.code]).toEqual([408, 'request_timeout']);
    expect(answer.body).toMatchObject({ headers_timeout_ms: 300, request_timeout_ms: 60_000 });
  });

  it('a body that stalls gets 408 JSON from the core (journaled), not minutes of silence', async () => {
    const { gateway, server } = await hardened({ headers_timeout_ms: 300, request_timeout_ms: 600 });
    const token = gateway.mintToken('agent-verified');
    const answer = await answerTo(
      server.port,
      `${searchHead(token)}X-Request-Id: stalled-1\r\nContent-Length: 100\r\n\r\n{"query":`,
    );
    expect([answer.status, answer.body.code, answer.headers['x-request-id']]).toEqual([
      408,
      'request_timeout',
      'stalled-1',
    ]);
    expect(gateway.journal.list().map((e) => [e.request_id, e.status, e.code, e.agent])).toEqual([
      ['stalled-1', 408, 'request_timeout', 'agent-verified'],
    ]);
  });

  it('a kept-alive connection with no request in progress is closed after the idle timeout', async () => {
    const { server } = await hardened({ idle_timeout_ms: 2000 });
    const answer = await answerTo(server.port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(200);
    // The configured idle timeout, as Node announces it (whole seconds), not its default of 5.
    expect(answer.headers['keep-alive']).toBe('timeout=2');
  });

  it('over the cap, the longest-idle connection of the address makes room; with none idle the newcomer gets 429', async () => {
    // Requests held in the identify stage until released: "in progress" without relying on timing.
    const held: (() => void)[] = [];
    let self: Gateway | undefined;
    const gateway = createGateway({
      serveIdentityProvider: true,
      verifier: {
        verify: (token) =>
          new Promise((resolve) => held.push(() => resolve((self as Gateway).idp.verify(token)))),
      },
    });
    self = gateway;
    const { server } = await hardened({ max_connections_per_client: 3 }, gateway);
    const token = gateway.mintToken('agent-verified');
    const whoami = `GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Agent-Identity: ${token}\r\n\r\n`;
    const opened: RawConnection[] = [];
    try {
      // Three idle connections; a fourth makes room with the first (the longest idle: it stops counting, and
      // closes at the headers timeout unless it sends a request), and its request is served.
      for (let i = 0; i < 3; i++) opened.push(await rawConnection(server.port));
      const fourth = await rawConnection(
        server.port,
        'GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      await fourth.closed;
      expect(parseAnswer(fourth.received()).status).toBe(200);
      // Three connections with a request in progress each: nothing idle to close, so a newcomer is refused.
      for (const connection of opened.slice(1, 3)) connection.socket.write(whoami);
      opened.push(await rawConnection(server.port, whoami));
      const deadline = Date.now() + 15_000;
      while (held.length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(held).toHaveLength(3);
      const refused = await rawConnection(server.port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
      opened.push(refused);
      await refused.closed;
      const answer = parseAnswer(refused.received());
      expect([answer.status, answer.body.code, answer.body.reason, answer.body.limit]).toEqual([
        429,
        'rate_limited',
        'connections',
        3,
      ]);
      expect(answer.headers['retry-after']).toBeUndefined();
      // Once released, the held requests are answered on their own connections.
      for (const release of held) release();
      const busy = opened.slice(1, 4);
      for (const connection of busy) {
        const deadline = Date.now() + 15_000;
        while (!connection.received().includes('\r\n\r\n{') && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(parseAnswer(connection.received()).status).toBe(200);
      }
    } finally {
      for (const connection of opened) connection.socket.destroy();
    }
  });
});
