import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fc, test } from '../../test/support/property.ts';
import { fromWebRequest } from '../adapters/fetch.ts';
import { GatewayError } from '../errors.ts';
import { mustBe } from '../validation.ts';
import { parseJsonBody, readJsonBody as readJsonRecord } from './read-body.ts';

/** The body stage over a web request, through the fetch adapter's record (which reads bodies with the limit). */
const readJsonBody = <S extends z.ZodType>(request: Request, schema: S, maxBytes: number) =>
  readJsonRecord(fromWebRequest(request), schema, maxBytes);

type Body = string | Uint8Array | ReadableStream<Uint8Array> | null;
const schema = z.object({ query: z.string().min(1, 'must be a non-empty string'), n: z.number().optional() });
const request = (
  body: Body | null,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => new Request('http://gw.test/x', { method: 'POST', body, headers });
const failure = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
};
const streamOf = (bytes: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let sent = 0; sent < bytes; sent += 1024)
        controller.enqueue(new Uint8Array(Math.min(1024, bytes - sent)));
      controller.close();
    },
  });

describe('readJsonBody', () => {
  it('parses a valid JSON object through the schema', async () => {
    expect(await readJsonBody(request('{"query":"q","extra":1}'), schema, 1024)).toEqual({ query: 'q' });
    const ct = { 'content-type': 'application/vnd.api+json; charset=UTF-8' };
    expect(await readJsonBody(request('{"query":"q"}', ct), schema, 1024)).toEqual({ query: 'q' });
  });

  it('415 for a missing or non-JSON content type, or a non-UTF-8 charset', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/json; charset=latin1' },
    ];
    for (const headers of cases) {
      const error = await failure(readJsonBody(request('{"query":"q"}', headers), schema, 1024));
      expect(error.code).toBe('unsupported_media_type');
      expect(error.status).toBe(415);
    }
  });

  it('413 when Content-Length or the streamed body passes the limit', async () => {
    const declared = request('x'.repeat(2000));
    expect((await failure(readJsonBody(declared, schema, 1024))).code).toBe('payload_too_large');
    const streamed = new Request('http://gw.test/x', {
      method: 'POST',
      body: streamOf(5000),
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect((await failure(readJsonBody(streamed, schema, 1024))).status).toBe(413);
  });

  it('400 naming the problem for empty, invalid UTF-8, malformed and non-object bodies', async () => {
    const cases: [Body | null, RegExp][] = [
      [null, /empty/],
      ['   ', /empty/],
      [new Uint8Array([0x7b, 0xff, 0x7d]), /UTF-8/],
      ['{"query":', /not valid JSON/],
      ['[1,2]', /JSON object/],
      ['"text"', /JSON object/],
    ];
    for (const [body, message] of cases) {
      const error = await failure(readJsonBody(request(body), schema, 1024));
      expect(error.code).toBe('invalid_request');
      expect(error.message).toMatch(message);
      expect(error.details.field).toBe('body');
    }
  });

  it('400 naming the first bad field', async () => {
    const error = await failure(readJsonBody(request('{"query":""}'), schema, 1024));
    expect(error.message).toBe('query: must be a non-empty string');
    expect(error.details.field).toBe('query');
    // A missing field is said to be missing, a wrong one what it must be.
    const typed = z.object({ query: z.string(mustBe('a string')) });
    expect((await failure(readJsonBody(request('{}'), typed, 1024))).message).toBe('query: is required');
    expect((await failure(readJsonBody(request('{"query":1}'), typed, 1024))).message).toBe(
      'query: must be a string',
    );
  });

  test.prop([
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.constantFrom('application/json', 'text/plain', ''),
  ])('any body fails only with a 4xx GatewayError, never anything else', async (body, contentType) => {
    const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
    try {
      await readJsonBody(request(body, headers), schema, 256);
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status).toBeGreaterThanOrEqual(400);
      expect((error as GatewayError).status).toBeLessThan(500);
    }
  });
});

describe('Content-Encoding', () => {
  const json = Buffer.from('{"query":"compressed","n":3}');
  const encoded = (body: Uint8Array, encoding: string) =>
    request(body, { 'content-type': 'application/json', 'content-encoding': encoding });

  it('gzip, deflate and br bodies (and identity, any case, or two layers) are decoded', async () => {
    const cases: [Uint8Array, string][] = [
      [gzipSync(json), 'gzip'],
      [gzipSync(json), 'x-gzip'],
      [gzipSync(json), 'GZip'],
      [deflateSync(json), 'deflate'],
      [brotliCompressSync(json), 'br'],
      [json, 'identity'],
      [brotliCompressSync(gzipSync(json)), 'gzip, br'],
      [gzipSync(json), 'identity, gzip'],
    ];
    for (const [body, encoding] of cases)
      expect([encoding, await readJsonBody(encoded(body, encoding), schema, 1024)]).toEqual([
        encoding,
        { query: 'compressed', n: 3 },
      ]);
  });

  it('a body that is not what its Content-Encoding says is a 400 naming the coding', async () => {
    const cases: [Uint8Array, string][] = [
      [json, 'gzip'],
      [gzipSync(json).subarray(0, 12), 'gzip'],
      [json, 'deflate'],
      [deflateRawSync(json), 'deflate'],
      [json, 'br'],
      [gzipSync(json), 'br'],
    ];
    for (const [body, encoding] of cases) {
      const error = await failure(readJsonBody(encoded(body, encoding), schema, 1024));
      expect([encoding, error.status, error.code, error.details.field]).toEqual([
        encoding,
        400,
        'invalid_request',
        'body',
      ]);
      expect(error.message).toContain(`labelled Content-Encoding: ${encoding}`);
    }
  });

  it('an unsupported coding (or more than two layers) is a 415 naming the accepted ones, in Accept-Encoding too', async () => {
    for (const encoding of ['compress', 'zstd', 'gzip, compress', 'gzip, gzip, gzip']) {
      const error = await failure(readJsonBody(encoded(gzipSync(json), encoding), schema, 1024));
      expect([encoding, error.status, error.code]).toEqual([encoding, 415, 'unsupported_media_type']);
      expect(error.details.accepted_encodings).toEqual(['gzip', 'deflate', 'br', 'identity']);
      expect(error.headers['accept-encoding']).toBe('gzip, deflate, br');
    }
  });

  it('decoded bytes count against the limit: a compressed bomb is a 413 (decoding stops at the limit)', async () => {
    const exact = Buffer.from(`{"query":"${'q'.repeat(1024 - 12)}"}`);
    expect(exact.length).toBe(1024);
    expect((await readJsonBody(encoded(gzipSync(exact), 'gzip'), schema, 1024)).query).toHaveLength(1012);
    const over = Buffer.from(`{"query":"${'q'.repeat(1024 - 11)}"}`);
    expect((await failure(readJsonBody(encoded(gzipSync(over), 'gzip'), schema, 1024))).status).toBe(413);
    // 64 MiB of zeros in 64 KiB of gzip: refused as soon as the first 64 KiB are out.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(128 * 1024);
    for (const [body, encoding] of [
      [bomb, 'gzip'],
      [brotliCompressSync(Buffer.alloc(8 * 1024 * 1024)), 'br'],
    ] as const) {
      const error = await failure(readJsonBody(encoded(body, encoding), schema, 128 * 1024));
      expect([encoding, error.status, error.details.max_bytes]).toEqual([encoding, 413, 128 * 1024]);
      expect(error.message).toMatch(/larger than 131072 bytes once decoded/);
    }
  });
});

describe('parseJsonBody', () => {
  const schema = z.object({ query: z.string() });
  it('ignores a leading byte order mark, refuses invalid UTF-8 anywhere', () => {
    expect(parseJsonBody(Buffer.from('\uFEFF{"query":"q"}'), schema)).toEqual({ query: 'q' });
    const bad = Buffer.concat([Buffer.from('{"query":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(() => parseJsonBody(bad, schema)).toThrow(/not valid UTF-8/);
  });
});
