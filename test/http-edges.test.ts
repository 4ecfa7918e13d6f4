import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createGateway } from '../mock-server/gateway.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await serve(createGateway(), { port: 0, log: () => {} });
});
afterAll(async () => {
  await server?.close();
});

/**
 * Sends raw bytes on one connection, optionally half-closes, and resolves with everything the server wrote
 * until it closed the connection (bounded: the server's own timeouts close it at the latest).
 */
function exchange(bytes: string, options: { halfClose?: boolean; closeAfterMs?: number } = {}) {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(bytes, 'latin1', () => {
      if (options.halfClose) socket.end();
    });
    const guard = setTimeout(() => socket.destroy(), options.closeAfterMs ?? 30_000);
    socket.on('close', () => clearTimeout(guard));
  });
}
const answersIn = (text: string) => text.match(/HTTP\/1\.[01] \d{3} /g) ?? [];
const bodyOf = (text: string) =>
  JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('HTTP edges: one answer per request, 400 JSON for what HTTP/1.1 forbids', () => {
  it('a Content-Length over the cap, then a half-close mid-body: one 413, then the connection closes', async () => {
    const head =
      'POST /idp/token HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n';
    const received = await exchange(`${head}{"query":"abc`, { halfClose: true });
    expect(answersIn(received)).toEqual(['HTTP/1.1 413 ']);
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyOf(received).code).toBe('payload_too_large');
  });

  it('the same with the rest of the body still coming: one 413, no answer to the body read as a request', async () => {
    const head =
      'POST /idp/token HTTP/1.1\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n';
    const received = await exchange(`${head}${'GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50)}`, {
      halfClose: true,
    });
    expect(answersIn(received)).toEqual(['HTTP/1.1 413 ']);
  });

  it('two Host headers: 400 invalid_request JSON naming Host, and the connection closes', async () => {
    const received = await exchange('GET /v1/health HTTP/1.1\r\nHost: gw.test\r\nHost: evil.test\r\n\r\n');
    expect(answersIn(received)).toEqual(['HTTP/1.1 400 ']);
    expect(bodyOf(received)).toMatchObject({ code: 'invalid_request', field: 'Host' });
    // Written in another case too: still two.
    const mixed = await exchange('GET /v1/health HTTP/1.1\r\nhost: gw.test\r\nHOST: gw.test\r\n\r\n');
    expect(answersIn(mixed)).toEqual(['HTTP/1.1 400 ']);
  });

  for (const version of ['2.0', '0.9', '1.2', '3.0'])
    it(`a request line naming HTTP/${version}: 400 invalid_request JSON`, async () => {
      const received = await exchange(`GET /v1/health HTTP/${version}\r\nHost: gw.test\r\n\r\n`);
      expect(answersIn(received)).toHaveLength(1);
      expect(received).toMatch(/^HTTP\/1\.1 400 /);
      expect(bodyOf(received).code).toBe('invalid_request');
    });

  it('HTTP/1.0 and HTTP/1.1 are served; one Host is fine; keep-alive still holds for complete requests', async () => {
    const old = await exchange('GET /v1/health HTTP/1.0\r\n\r\n', { halfClose: true });
    expect(old).toMatch(/^HTTP\/1\.1 200 /);
    const two = await exchange(
      'GET /v1/health HTTP/1.1\r\nHost: gw.test\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n',
    );
    expect(answersIn(two)).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
  });
});

describe('/idp/token is limited per client address', () => {
  it('wrong API keys beyond the allowance: 429 rate_limited with Retry-After, the right key too, for that address', async () => {
    const gateway = createGateway({
      config: { identity: { token_ttl_seconds: 3600, token_failures_per_minute: 3 } },
    });
    const own = await serve(gateway, { port: 0, log: () => {} });
    const post = (apiKey: string) =>
      fetch(`${own.url}/idp/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: apiKey }),
      });
    try {
      expect((await post('ak_verified_2b8d4f6a1c9e')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await post(`ak_guess_${i}`)).status).toBe(401);
      const refused = await post('ak_guess_more');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ code: 'rate_limited', reason: 'api_key_attempts' });
      expect((await post('ak_verified_2b8d4f6a1c9e')).status).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('in-process (fetch handler: no client address) it is not limited', async () => {
    const gateway = createGateway({
      config: { identity: { token_ttl_seconds: 3600, token_failures_per_minute: 1 } },
    });
    for (let i = 0; i < 5; i++) {
      const answer = await gateway.fetch(
        new Request('http://gw.test/idp/token', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: 'wrong' }),
        }),
      );
      expect(answer.status).toBe(401);
    }
  });
});
