import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { type ExchangePieces, redactExchange } from './exchange-capture.ts';
import { CapturedExchange, readPieces, writePieces } from './packed-exchange.ts';
import { createRefTable, RecordReader, RecordWriter } from './record-bytes.ts';

const refs = createRefTable();
const writer = new RecordWriter(refs);

/** The pieces as a record's bytes (a copy: the writer's scratch is reused). */
function packExchange(pieces: ExchangePieces): Buffer {
  writer.begin();
  writePieces(writer, pieces);
  return Buffer.from(writer.take().bytes);
}
const unpackExchange = (bytes: Buffer) => readPieces(new RecordReader(bytes, refs));

/** A body as the capture takes it: absent, text (any Unicode) or bytes. */
const body = fc.option(
  fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.uint8Array({ maxLength: 300 })),
  {
    nil: undefined,
  },
);
// Any UTF-16, lone surrogates included (a list is written as one text: their lengths must still hold).
const headerList = fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 12 });

/**
 * A list read back: each text as it was when it is well-formed Unicode; the same length in any case (a lone
 * surrogate is one unit of U+FFFD, or itself when it pairs with its neighbour's), all of them together as
 * their UTF-8 round trip.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function expectSameTexts(back: readonly string[], given: readonly string[]) {
  expect(back.map((text) => text.length)).toEqual(given.map((text) => text.length));
  expect(back.join('')).toBe(Buffer.from(given.join('')).toString());
  given.forEach((text, k) => {
    if (!LONE_SURROGATE.test(text)) expect(back[k]).toBe(text);
  });
}

const pieces = fc.record(
  {
    requestHeaders: headerList,
    query: fc.string({ maxLength: 80 }),
    requestBody: body,
    requestBodyBytes: fc.nat({ max: 10_000_000 }),
    responseHeaders: headerList,
    responseBody: body,
    responseBodyBytes: fc.nat({ max: 10_000_000 }),
    httpVersion: fc.constantFrom('1.0', '1.1'),
  },
  { requiredKeys: ['requestHeaders', 'requestBodyBytes', 'responseHeaders'] },
) as fc.Arbitrary<ExchangePieces>;

const bytesOf = (value: Uint8Array | string | undefined) =>
  value === undefined ? undefined : Buffer.from(value as Uint8Array).toString('hex');
const asBytes = (value: Uint8Array | string | undefined) =>
  value === undefined
    ? undefined
    : typeof value === 'string'
      ? Buffer.from(value).toString('hex')
      : bytesOf(value);

describe('packed exchange', () => {
  test.prop([pieces])('gives back every piece: texts as they were, bodies as their UTF-8 bytes', (given) => {
    const back = unpackExchange(packExchange(given));
    expectSameTexts(back.requestHeaders, given.requestHeaders);
    expectSameTexts(back.responseHeaders, given.responseHeaders);
    expect(back.query).toBe(given.query === undefined ? undefined : Buffer.from(given.query).toString());
    expect(back.httpVersion).toBe(given.httpVersion);
    expect(back.requestBodyBytes).toBe(given.requestBodyBytes);
    expect(back.responseBodyBytes).toBe(given.responseBodyBytes);
    expect(bytesOf(back.requestBody)).toBe(asBytes(given.requestBody));
    expect(bytesOf(back.responseBody)).toBe(asBytes(given.responseBody));
  });

  it('redacts to the same exchange as the pieces themselves', () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudC0xIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
    const given: ExchangePieces = {
      requestHeaders: ['Host', '127.0.0.1', 'X-Agent-Identity', token, 'Authorization', 'Bearer abc.def'],
      query: 'debug=1',
      requestBody: Buffer.from('{"query":"é agent tools","api_key":"ak_live_0123456789abcdef"}'),
      requestBodyBytes: 62,
      responseHeaders: ['content-type', 'application/json'],
      responseBody: '{"results":[{"title":"ünïcode ✓"}]}',
      httpVersion: '1.1',
    };
    const redact = (text: string) => text.replaceAll('agent', '[A]');
    expect(redactExchange(unpackExchange(packExchange(given)), 2048, redact)).toEqual(
      redactExchange(given, 2048, redact),
    );
  });

  it('packs one exchange after another in the same scratch without mixing them, however large', () => {
    const large: ExchangePieces = {
      requestHeaders: ['x-big', 'v'.repeat(40_000)],
      requestBodyBytes: 0,
      responseHeaders: [],
      responseBody: 'ß'.repeat(30_000),
    };
    const small: ExchangePieces = { requestHeaders: ['a', 'b'], requestBodyBytes: 1, responseHeaders: [] };
    const first = packExchange(large);
    const second = packExchange(small);
    expect(unpackExchange(first).requestHeaders[1]).toHaveLength(40_000);
    expect(unpackExchange(first).responseBody?.length).toBe(60_000);
    expect(unpackExchange(second)).toEqual({
      requestHeaders: ['a', 'b'],
      requestBody: undefined,
      requestBodyBytes: 1,
      responseHeaders: [],
      responseBody: undefined,
    });
  });

  it('a captured exchange read back from its record builds the same redacted exchange', () => {
    const scan = (text: string, own: { token?: string }) => ({
      redacted: own.token ? text.replaceAll(own.token, '[OWN]') : text,
    });
    const token = 'tok_0123456789abcdef0123';
    const given = new CapturedExchange(
      {
        requestHeaders: ['x-echo', `say ${token}`],
        requestBody: Buffer.from(`{"query":"${token}"}`),
        requestBodyBytes: 33,
        responseHeaders: ['content-type', 'application/json'],
        responseBody: '{"ok":true}',
        isCredential: (name) => name === 'x-echo',
      },
      2048,
      scan,
      { token, agentId: 'agent-a' },
    );
    writer.begin();
    given.recordTo(writer);
    const bytes = Buffer.from(writer.take().bytes);
    const reader = new RecordReader(bytes, refs);
    const back = reader.ref<(r: RecordReader) => CapturedExchange>()(reader);
    expect(back.build()).toEqual(given.build());
    // The credential names travelled by reference: the header is redacted by place, the body by the scan.
    expect(back.build().request_headers[0]?.[1]).not.toContain(token);
    expect(back.build().request_body).toBe('{"query":"[OWN]"}');
  });
});
