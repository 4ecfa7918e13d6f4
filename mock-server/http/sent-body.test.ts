import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readSentBody } from './sent-body.ts';

const MAX = 65_536;
const read = (body: string | Uint8Array, contentType?: string, contentEncoding?: string) =>
  readSentBody(typeof body === 'string' ? Buffer.from(body) : body, { contentType, contentEncoding }, MAX);

describe('readSentBody: what a call sends, whatever its labels', () => {
  it('reads JSON, forms (a repeated name as an array), multipart and text', () => {
    expect(read('{"query":"x","n":[1]}', 'application/json').value).toEqual({ query: 'x', n: [1] });
    expect(
      read('query=hello+world&api_key=k&tag=a&tag=b', 'application/x-www-form-urlencoded').value,
    ).toEqual({
      query: 'hello world',
      api_key: 'k',
      tag: ['a', 'b'],
    });
    const multipart = [
      '--XyZ',
      'Content-Disposition: form-data; name="query"',
      '',
      'weather in Paris',
      '--XyZ',
      'Content-Disposition: form-data; name="file"; filename="notes.txt"',
      'Content-Type: text/plain',
      '',
      'my key is ak_123',
      '--XyZ--',
      '',
    ].join('\r\n');
    expect(read(multipart, 'multipart/form-data; boundary=XyZ').value).toEqual({
      query: 'weather in Paris',
      file: { filename: 'notes.txt', content: 'my key is ak_123' },
    });
    expect(read('just some text', 'text/plain').value).toBe('just some text');
    // JSON sent with another label (or none) is read as JSON.
    expect(read('{"query":"x"}', 'text/plain').value).toEqual({ query: 'x' });
    expect(read('{"query":"x"}').value).toEqual({ query: 'x' });
    expect(read('{not json', 'application/json').value).toBe('{not json');
    expect(read(new Uint8Array(0), 'application/json')).toEqual({});
  });

  it('decodes any charset the Encoding standard knows', () => {
    expect(
      read(Buffer.from('query=caf\xe9', 'latin1'), 'application/x-www-form-urlencoded; charset=ISO-8859-1')
        .value,
    ).toEqual({
      query: 'café',
    });
    expect(
      read(Buffer.from('{"query":"ünïcode"}', 'utf16le'), 'application/json; charset="utf-16le"').value,
    ).toEqual({
      query: 'ünïcode',
    });
    const sjis = new Uint8Array([0x93, 0xfa, 0x96, 0x7b]); // 日本 in Shift_JIS
    expect(read(sjis, 'text/plain; charset=shift_jis').value).toBe('日本');
  });

  it('undoes gzip, deflate (zlib) and br, one or two layers, to the bytes the gateway parses', () => {
    const json = Buffer.from('{"query":"compressed ak_123"}');
    for (const [coding, bytes] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['br', brotliCompressSync(json)],
      ['gzip, br', brotliCompressSync(gzipSync(json))],
    ] as const) {
      const sent = read(bytes, 'application/json', coding);
      expect(sent.value, coding).toEqual({ query: 'compressed ak_123' });
      expect(Buffer.from(sent.decoded as Uint8Array).equals(json), coding).toBe(true);
      expect(sent.unreadable).toBeUndefined();
    }
  });

  it('says why a body could not be read, never throws, and keeps what it could read', () => {
    expect(read('not gzip at all', 'application/json', 'gzip')).toEqual({
      unreadable: 'it is labelled Content-Encoding: gzip but is not valid gzip data',
    });
    expect(read('x', 'application/json', 'zstd').unreadable).toMatch(/Content-Encoding "zstd" is not one/);
    expect(read(gzipSync(Buffer.alloc(MAX + 1, 'a')), 'text/plain', 'gzip').unreadable).toMatch(
      /larger than 65536 bytes once decoded/,
    );
    const bad = read(Buffer.from([0x71, 0x3d, 0xff, 0xfe, 0x41]), 'application/x-www-form-urlencoded');
    expect(bad.unreadable).toBe('it is labelled charset utf-8 but is not valid utf-8');
    expect(bad.value).toEqual({ q: 'ÿþA' });
    expect(read('q=1', 'text/plain; charset=klingon')).toMatchObject({
      value: 'q=1',
      unreadable: 'its charset "klingon" is not one known to the Encoding standard',
    });
    expect(read('query=x', 'multipart/form-data').unreadable).toBe(
      'it is labelled multipart/form-data without a boundary',
    );
  });
});
