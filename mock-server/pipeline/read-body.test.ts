import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromWebRequest } from '../adapters/fetch.ts';
import { GatewayError } from '../errors.ts';
import { mustBe, parseJsonBody, readJsonBody as readJsonRecord } from './read-body.ts';

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

describe('parseJsonBody', () => {
  const schema = z.object({ query: z.string() });
  it('ignores a leading byte order mark, refuses invalid UTF-8 anywhere', () => {
    expect(parseJsonBody(Buffer.from('\uFEFF{"query":"q"}'), schema)).toEqual({ query: 'q' });
    const bad = Buffer.concat([Buffer.from('{"query":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(() => parseJsonBody(bad, schema)).toThrow(/not valid UTF-8/);
  });
});
