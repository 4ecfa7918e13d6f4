import { createHash, randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { adminKeyWatch } from '../mock-server/proxy/wire.ts';
import { useProxyInFront } from './support/proxy-in-front.ts';

/*
 * The proxy's admin key is never forwarded in a request body, in any spelling: the body streams through the
 * guard (mock-server/proxy/admin-key-guard.ts), a hit is answered 400 by the proxy, the target's request is
 * aborted (it never gets a whole request), and the target's bytes never hold the key. A body without the key
 * passes byte for byte. A recording target behind a real proxy over loopback sockets.
 */

const ADMIN = 'proxy-body-admin-key-5d2a9e';
const carries = adminKeyWatch(ADMIN);

/** What the target got of one request: its bytes, and whether the request came whole. */
interface Received {
  name: string;
  bytes: Buffer;
  complete: boolean | undefined;
}

/** Sends a body in chunks of `size` bytes (a turn of the event loop between them): the answer. */
function send(base: string, name: string, body: Buffer, size: number, headers: Record<string, string> = {}) {
  const { port } = new URL(base);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/v1/tools/search',
        headers: { 'content-type': 'application/json', 'x-case': name, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    // The proxy may answer and close before the whole body is written: that is its refusal, not an error.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    let at = 0;
    const next = () => {
      if (req.destroyed) return;
      if (at >= body.length) return req.end();
      req.write(body.subarray(at, at + size), () => setImmediate(next));
      at += size;
    };
    next();
  });
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const filler = (n: number) =>
  'the quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);

describe('the proxy never forwards its admin key in a request body', () => {
  const received: Received[] = [];
  const target = createServer((req, res) => {
    const record: Received = {
      name: String(req.headers['x-case']),
      bytes: Buffer.alloc(0),
      complete: undefined,
    };
    received.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      record.bytes = Buffer.concat(chunks);
    });
    req.on('end', () => {
      record.complete = true;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ bytes: record.bytes.length }));
    });
    req.on('close', () => {
      if (record.complete === undefined) record.complete = false;
    });
  });
  const proxyUrl = useProxyInFront(target, ADMIN);

  const around = filler(5000);
  const CASES: [name: string, body: Buffer, size: number, headers?: Record<string, string>][] = [
    ['raw, a byte at a time', Buffer.from(`{"query":"weather","admin":"${ADMIN}"}`), 1],
    ['raw, in a long body', Buffer.from(`{"query":"${around}","admin":"${ADMIN}","more":"${around}"}`), 1000],
    ['percent-encoded', Buffer.from(`query=x&k=${encodeURIComponent(ADMIN).replace(/-/g, '%2D')}`), 3],
    [
      'percent-encoded twice',
      Buffer.from(`k=${encodeURIComponent(encodeURIComponent(ADMIN).replace(/-/g, '%2D'))}`),
      1,
    ],
    ['base64, alignment 0', Buffer.from(`{"blob":"${b64(`${ADMIN}${around}`)}"}`), 700],
    ['base64, alignment 1', Buffer.from(`{"blob":"${b64(`${around}.${ADMIN}${around}`)}"}`), 700],
    ['base64, alignment 2', Buffer.from(`{"blob":"${b64(`${around}..${ADMIN}${around}`)}"}`), 1],
    ['basic credential', Buffer.from(`{"auth":"Basic ${b64(`admin:${ADMIN}`)}"}`), 2],
    ['json inside json', Buffer.from(JSON.stringify({ note: JSON.stringify({ key: ADMIN }) })), 5],
    [
      'multipart',
      Buffer.from(
        `--zz\r\nContent-Disposition: form-data; name="doc"\r\n\r\n${around}\r\n--zz\r\nContent-Disposition: form-data; name="key"\r\n\r\n${ADMIN}\r\n--zz--\r\n`,
      ),
      64,
      { 'content-type': 'multipart/form-data; boundary=zz' },
    ],
    ['gzip', gzipSync(`{"query":"weather","admin":"${ADMIN}"}`), 1, { 'content-encoding': 'gzip' }],
  ];

  it('refuses each spelling with its own 400, aborts the target request, and the target never holds the key', async () => {
    for (const [name, body, size, headers] of CASES) {
      const answer = await send(proxyUrl(), name, body, size, headers);
      expect(answer.status, name).toBe(400);
      expect(JSON.parse(answer.body), name).toMatchObject({ code: 'invalid_request', proxy: true });
      expect(answer.body).toMatch(/body carries the proxy's admin key/);
    }
    // Every request the target began to get ends incomplete (the proxy aborted it).
    await vi.waitFor(() => expect(received.every((r) => r.complete !== undefined)).toBe(true), {
      timeout: 30_000,
    });
    for (const { name, bytes, complete } of received) {
      expect(complete, name).toBe(false);
      const text = bytes.toString('latin1');
      expect(text, name).not.toContain(ADMIN);
      expect(carries(text), name).toBe(false);
      if (name === 'gzip') {
        let inflated = '';
        try {
          inflated = gunzipSync(bytes, { finishFlush: 2 }).toString('latin1');
        } catch {
          inflated = '';
        }
        expect(inflated).not.toContain(ADMIN);
      }
    }
    const journal = await fetch(`${proxyUrl()}/__admin/journal`, { headers: { 'x-admin-key': ADMIN } });
    const text = await journal.text();
    expect(carries(text)).toBe(false);
    const faults = (JSON.parse(text).entries as { fault?: string }[]).map((e) => e.fault);
    expect(faults.filter((f) => f === 'proxy:admin_key_in_body')).toHaveLength(CASES.length);
  });

  it('a body without the key passes byte for byte, plain or gzipped', async () => {
    const binary = Buffer.concat([
      randomBytes(1_000_000),
      Buffer.from(randomBytes(300_000).toString('base64')),
    ]);
    const plain = await send(proxyUrl(), 'innocent', binary, 65_536, {
      'content-type': 'application/octet-stream',
    });
    expect(plain.status).toBe(200);
    const zipped = gzipSync(filler(30_000));
    const gz = await send(proxyUrl(), 'innocent gzip', zipped, 100, { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const got = (name: string) => received.find((r) => r.name === name);
    expect(got('innocent')?.complete).toBe(true);
    expect(sha(got('innocent')?.bytes ?? Buffer.alloc(0))).toBe(sha(binary));
    expect(got('innocent gzip')?.bytes.equals(zipped)).toBe(true);
  });
});
