import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.ts';
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

  it('fails with EADDRINUSE when the port is taken', async () => {
    const first = await start(async () => new Response('x'));
    await expect(serve({ fetch: async () => new Response('y') }, { port: first.port })).rejects.toMatchObject(
      {
        code: 'EADDRINUSE',
      },
    );
  });
});
