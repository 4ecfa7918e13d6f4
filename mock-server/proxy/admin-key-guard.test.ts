import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type AdminKeyGuardOptions,
  adminKeyGuard,
  type BodyRefusal,
  holdBackFor,
} from './admin-key-guard.ts';
import { adminKeyWatch } from './wire.ts';

const KEY = 'proxy-guard-admin-key-7c1e';
const carries = adminKeyWatch(KEY);

/** Writes `body` through a guard in chunks of `size` bytes: what it passed on, and any refusal. */
async function through(body: Buffer, size: number, options: Partial<AdminKeyGuardOptions> = {}) {
  const refusals: BodyRefusal[] = [];
  let settle = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const guard = adminKeyGuard({
    carries,
    adminKey: KEY,
    contentEncoding: undefined,
    contentType: undefined,
    maxBodyBytes: 64 * 1024,
    refuse: (refusal) => {
      refusals.push(refusal);
      settle();
    },
    ...options,
  });
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  let ended = false;
  guard.on('end', () => {
    ended = true;
    settle();
  });
  for (let at = 0; at < body.length; at += size) guard.write(body.subarray(at, at + size));
  guard.end();
  await settled;
  // Whatever the guard still had to give after a refusal would have come by now.
  await new Promise((resolve) => setImmediate(resolve));
  return { passed: Buffer.concat(out), refusals, ended };
}

/** Text of printable filler of `n` characters (deterministic). */
const filler = (n: number) => 'lorem ipsum dolor sit amet, '.repeat(Math.ceil(n / 28)).slice(0, n);

/** Every spelling the guard must catch, each inside a longer body. */
function spellings(): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const around = filler(3000);
  return {
    raw: `{"q":"${around}","k":"${KEY}"}`,
    'upper case': `note ${KEY.toUpperCase()} end`,
    'percent-encoded once': `a=${[...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}&b=1`,
    'percent-encoded twice': `a=${encodeURIComponent(encodeURIComponent(KEY).replace(/-/g, '%2D'))}`,
    'base64, alignment 0': `{"blob":"${b64(`${KEY}${around}`)}"}`,
    'base64, alignment 1': `{"blob":"${b64(`${around}x${KEY}${around}`)}"}`,
    'base64, alignment 2': `{"blob":"${b64(`${around}xy${KEY}${around}`)}"}`,
    base64url: Buffer.from(`${around}${KEY}`).toString('base64url'),
    basic: `Authorization: Basic ${b64(`admin:${KEY}`)}`,
    hex: `${around} ${Buffer.from(`${around.slice(0, 101)}${KEY}`).toString('hex')}`,
    multipart: `--b\r\nContent-Disposition: form-data; name="f"\r\n\r\n${around}\r\n--b\r\nContent-Disposition: form-data; name="key"\r\n\r\n${KEY}\r\n--b--\r\n`,
    'json in json': JSON.stringify({ note: JSON.stringify({ admin: KEY }) }),
  };
}

describe('the admin key guard on a request body', () => {
  it('passes a body without the key byte for byte, whatever the chunks, holding back only its tail', async () => {
    const body = Buffer.concat([
      randomBytes(20_000),
      Buffer.from(randomBytes(30_000).toString('base64')),
      Buffer.from(filler(5000)),
    ]);
    for (const size of [1, 7, 1000, 16_384, body.length]) {
      const { passed, refusals, ended } = await through(body, size);
      expect(refusals, `chunks of ${size}`).toEqual([]);
      expect(ended).toBe(true);
      expect(passed.equals(body), `chunks of ${size}`).toBe(true);
    }
  });

  it('streams: before the end, all but the held-back tail has passed', async () => {
    const guard = adminKeyGuard({
      carries,
      adminKey: KEY,
      contentEncoding: undefined,
      contentType: undefined,
      maxBodyBytes: 1024,
      refuse: () => {},
    });
    let passed = 0;
    guard.on('data', (chunk: Buffer) => {
      passed += chunk.length;
    });
    const body = Buffer.from(filler(200_000));
    guard.write(body);
    await new Promise((resolve) => setImmediate(resolve));
    // The cut moves back to a whole group of a run it falls in (here a word): at most 7 bytes.
    expect(passed).toBeLessThanOrEqual(body.length - holdBackFor(KEY));
    expect(passed).toBeGreaterThan(body.length - holdBackFor(KEY) - 8);
  });

  it('refuses every spelling of the key, in any chunking, and passes on no byte of it', async () => {
    for (const [name, text] of Object.entries(spellings())) {
      const body = Buffer.from(text);
      for (const size of [1, 3, 997, body.length]) {
        const { passed, refusals, ended } = await through(body, size);
        expect(
          refusals.map((r) => r.fault),
          `${name}, chunks of ${size}`,
        ).toEqual(['proxy:admin_key_in_body']);
        expect(refusals[0]?.error.status).toBe(400);
        expect(ended, name).toBe(false);
        expect(carries(passed.toString('latin1')), `${name}, chunks of ${size}`).toBe(false);
        expect(passed.toString('latin1')).not.toContain(KEY.slice(0, 10));
      }
    }
  });

  it('a key with characters no encoded run holds is found as sent, rot13, upper case or escaped, amid binary', async () => {
    const key = 'adm.key!with:dots=1 2';
    const watch = adminKeyWatch(key);
    const rot = key.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + 13) % 26) + 97));
    const binary = randomBytes(100_000);
    for (const spelling of [key, rot, key.toUpperCase(), encodeURIComponent(key), key.replace(' ', '+')]) {
      const body = Buffer.concat([binary, Buffer.from(spelling), binary]);
      const { refusals, passed } = await through(body, 4096, { carries: watch, adminKey: key });
      expect(
        refusals.map((r) => r.fault),
        spelling,
      ).toEqual(['proxy:admin_key_in_body']);
      expect(passed.length).toBeLessThan(binary.length);
    }
    const clean = await through(binary, 4096, { carries: watch, adminKey: key });
    expect(clean.passed.equals(binary)).toBe(true);
  });

  it('a compressed body is decoded and scanned before any of it passes; one it cannot scan is refused', async () => {
    const gzip = { contentEncoding: 'gzip' };
    const innocent = gzipSync(filler(40_000));
    const clean = await through(innocent, 100, gzip);
    expect(clean.refusals).toEqual([]);
    expect(clean.passed.equals(innocent)).toBe(true);

    const keyed = await through(gzipSync(`{"k":"${KEY}"}`), 1, gzip);
    expect(keyed.refusals.map((r) => r.fault)).toEqual(['proxy:admin_key_in_body']);
    expect(keyed.passed.length).toBe(0);

    const base64ed = await through(gzipSync(Buffer.from(`{"k":"${KEY}"}`).toString('base64')), 5, gzip);
    expect(base64ed.refusals.map((r) => r.fault)).toEqual(['proxy:admin_key_in_body']);

    const large = await through(gzipSync(randomBytes(100_000)), 4096, { ...gzip, maxBodyBytes: 64 * 1024 });
    expect(large.refusals.map((r) => [r.fault, r.error.status])).toEqual([['proxy:body_not_scanned', 413]]);
    expect(large.passed.length).toBe(0);

    const broken = await through(Buffer.from('not gzip at all'), 4, gzip);
    expect(broken.refusals.map((r) => [r.fault, r.error.status])).toEqual([['proxy:body_not_scanned', 400]]);
    expect(broken.refusals[0]?.error.message).toContain('not valid gzip');

    const unknown = await through(Buffer.from('zstd bytes'), 4, { contentEncoding: 'zstd' });
    expect(unknown.refusals.map((r) => r.fault)).toEqual(['proxy:body_not_scanned']);
  });
});
