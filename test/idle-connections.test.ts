import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe } from './support/cli.ts';

const IDLE_SOCKETS = 2000;
const BATCH = 200;

/** Opens a socket that never sends a byte; resolves, once the server closes it, with what it was sent. */
function idleSocket(port: number): Promise<{ closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1');
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () => {
      socket.on('error', () => {});
      resolve({ closed });
    });
    socket.once('error', reject);
  });
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms),
    ),
  ]);

describe('idle connections are reaped (server.headers_timeout_ms, max_connections_per_client)', () => {
  it(`${IDLE_SOCKETS} sockets that never send a byte are all closed, while requests made meanwhile all succeed`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idle-connections-'));
    const config = join(dir, 'short-timeouts.yaml');
    // Short timeouts so the test is quick; the deadline below is generous (Node's own default would be
    // 60 s and more), and nothing is timed: only that everything closes, and every request succeeds.
    writeFileSync(
      config,
      'server:\n  headers_timeout_ms: 1000\n  request_timeout_ms: 2000\n  idle_timeout_ms: 1000\n',
    );
    const server = await startServe(['--config', config], { AGENT_GATEWAY_SIGNING_SECRET: '' });
    try {
      const port = Number(new URL(server.url).port);
      // The token first, before any idle socket: on a loaded machine the 1 s headers timeout can answer this
      // very request 408, so it is asked again (a few times) rather than sending `undefined` as the token.
      let token: string | undefined;
      for (let attempt = 0; attempt < 5 && token === undefined; attempt++) {
        const minted = await fetch(`${server.url}/idp/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
        });
        const body = (await minted.json()) as { token?: string; code?: string };
        if (minted.status === 200) token = body.token;
        else expect(body.code, 'only a timeout may refuse the token').toBe('request_timeout');
      }
      if (token === undefined) throw new Error('the identity provider gave no token in 5 tries');
      const identity = token;
      const idle: Promise<string>[] = [];
      const requests: Promise<number | string>[] = [];
      const request = (path: string) =>
        fetch(`${server.url}${path}`, { headers: { 'X-Agent-Identity': identity } }).then(
          // A refusal is kept with its body, so a failure says which code refused it.
          async (response) => {
            const text = await response.text();
            return response.status === 200 ? 200 : `${response.status} ${text.slice(0, 200)}`;
          },
        );
      for (let opened = 0; opened < IDLE_SOCKETS; opened += BATCH) {
        const batch = await Promise.all(Array.from({ length: BATCH }, () => idleSocket(port)));
        for (const socket of batch) idle.push(socket.closed);
        requests.push(request('/v1/health'), request('/v1/whoami'));
      }
      requests.push(request('/v1/health'), request('/v1/whoami'));
      const answers = await within(Promise.all(idle), 45_000, `closing ${IDLE_SOCKETS} idle sockets`);
      expect(answers).toHaveLength(IDLE_SOCKETS);
      // Closed to make room for newer connections (nothing sent), or at the headers timeout with a 408.
      const kinds = new Set(
        answers.map((text) =>
          text === '' ? 'closed' : /^HTTP\/1\.1 408 .*"code":"request_timeout"/s.test(text) ? '408' : text,
        ),
      );
      expect([...kinds].filter((kind) => kind !== 'closed' && kind !== '408')).toEqual([]);
      expect(await Promise.all(requests)).toEqual(requests.map(() => 200));
      expect(await request('/v1/health')).toBe(200);
      expect(server.child.exitCode).toBeNull();
    } finally {
      await server.stop();
    }
  }, 120_000);
});
