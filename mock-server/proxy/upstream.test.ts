import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { readProxyOptions } from './proxy-options.ts';
import { createUpstream, targetUrl } from './upstream.ts';

const DEADLINES = { connectTimeoutMs: 100, firstByteTimeoutMs: 200, idleTimeoutMs: 300 };
const seen: { method?: string; url?: string; headers: IncomingMessage['headers'] }[] = [];
const server = createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, headers: req.headers });
  res.end('{"agent_id":"agent-x"}');
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends a request made by the upstream client and waits for its answer. */
const sent = (out: ReturnType<ReturnType<typeof createUpstream>['request']>) =>
  new Promise<number>((resolve, reject) => {
    out.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    out.on('error', reject);
    out.end();
  });

describe('the target', () => {
  it('is an http or https URL; anything else is a 400 invalid_request', () => {
    expect(targetUrl('https://staging.example.com/gw').pathname).toBe('/gw');
    expect(() => targetUrl('ftp://example.com/')).toThrow(GatewayError);
    expect(() => targetUrl('ftp://example.com/')).toThrow(/must be an http:\/\/ or https:\/\/ URL, got ftp:/);
  });

  it("the proxy's options: defaults applied once, a bad one a 400 naming its field", () => {
    expect(readProxyOptions({ connectTimeoutMs: 2000 })).toEqual({
      connectTimeoutMs: 2000,
      firstByteTimeoutMs: 30_000,
      idleTimeoutMs: 30_000,
      keepField: [],
    });
    expect(() => readProxyOptions({ idleTimeoutMs: 0 })).toThrow(/Invalid proxy options: idleTimeoutMs/);
  });
});

describe('the upstream client', () => {
  it("sends each request under the target's path, with the headers it is given (Host the caller's)", async () => {
    const upstream = createUpstream(targetUrl(`${base}/gw/`), DEADLINES);
    try {
      const status = await sent(
        upstream.request('POST', '/v1/web/search?x=1', ['Host', 'target.test', 'X-A', '1']),
      );
      expect(status).toBe(200);
      expect(seen.at(-1)).toMatchObject({
        method: 'POST',
        url: '/gw/v1/web/search?x=1',
        headers: { host: 'target.test', 'x-a': '1' },
      });
    } finally {
      upstream.close();
    }
  });

  it("asks the target's whoami with the token, held to at most 5 s or the connect and first-byte deadlines together", async () => {
    const upstream = createUpstream(targetUrl(base), DEADLINES);
    try {
      expect(await sent(upstream.whoami('tok-123'))).toBe(200);
      expect(seen.at(-1)).toMatchObject({
        method: 'GET',
        url: '/v1/whoami',
        headers: { 'x-agent-identity': 'tok-123', accept: 'application/json' },
      });
      expect(upstream.whoamiTimeoutMs).toBe(300);
    } finally {
      upstream.close();
    }
    const slow = { connectTimeoutMs: 5000, firstByteTimeoutMs: 30_000, idleTimeoutMs: 1 };
    expect(createUpstream(targetUrl(base), slow).whoamiTimeoutMs).toBe(5000);
    expect(createUpstream(targetUrl(base), slow, 42).whoamiTimeoutMs).toBe(42);
  });
});
