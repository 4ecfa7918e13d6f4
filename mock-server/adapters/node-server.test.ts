import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
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

  it('fails with EADDRINUSE when the port is taken', async () => {
    const first = await start(async () => new Response('x'));
    await expect(serve({ fetch: async () => new Response('y') }, { port: first.port })).rejects.toMatchObject(
      {
        code: 'EADDRINUSE',
      },
    );
  });
});
