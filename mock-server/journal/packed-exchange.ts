import type { ExchangePieces } from './exchange-capture.ts';

/*
 * An exchange's raw pieces, as an entry keeps them until its first reader, in one byte buffer (issue 35,
 * point 2). Kept as JavaScript strings and arrays (the header lists, the answer's text, the request's body),
 * the pieces of the last `journal.capacity` exchanges survived every young-generation collection of the
 * gateway's life and were copied at each: measured at a fixed 2,500 req/s, the same gateway spent about 25
 * µs per request less with `journal.body_bytes: 0` than with the pieces kept. Packed, they are bytes outside
 * the collector's heap (a slice of a slab only packs share, for a usual exchange), and an entry holds one small
 * view of them; reading them back (the first read of an entry: admin API, dashboard, export) costs one
 * decode, which the redaction that follows dwarfs.
 *
 * Layout, in order: each string as a 4-byte length and its UTF-8 bytes; a list as its count, then its
 * strings; an optional field as a tag byte (0 absent, 1 present) then its value; numbers as 8-byte doubles.
 * Fields: http version?, query?, request header list, request body?, request body bytes, response header
 * list, response body?, response body bytes?. A body given as text is kept as its UTF-8 bytes (the
 * redaction reads bytes either way).
 */

/**
 * Where the pack being written goes, and how far it got: a slice of the current slab for a usual exchange
 * (written in place, no copy), a buffer of its own for a large one (`slabSlice`). Each writer below has the
 * room it needs: `packExchange` reserves the most the pieces can take first, and gives back what it did not
 * use.
 */
let target: Buffer = Buffer.allocUnsafeSlow(0);
let at = 0;

function writeNumber(value: number): void {
  target.writeDoubleLE(value, at);
  at += 8;
}

function writeString(text: string): void {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: with that much room, `write` never cuts the text.
  const length = target.write(text, at + 4, 'utf8');
  target.writeUInt32LE(length, at);
  at += 4 + length;
}

function writeBytes(bytes: Uint8Array): void {
  target.writeUInt32LE(bytes.length, at);
  target.set(bytes, at + 4);
  at += 4 + bytes.length;
}

function writeTag(present: boolean): void {
  target[at++] = present ? 1 : 0;
}

function writeList(values: readonly string[]): void {
  target.writeUInt32LE(values.length, at);
  at += 4;
  for (const value of values) writeString(value);
}

function writeBody(body: Uint8Array | string | undefined): void {
  writeTag(body !== undefined);
  if (body === undefined) return;
  if (typeof body === 'string') writeString(body);
  else writeBytes(body);
}

/** The most bytes a text takes (a length, then at most 3 bytes per UTF-16 unit). */
const textBound = (text: string | undefined) => (text === undefined ? 0 : 4 + 3 * text.length);
const listBound = (values: readonly string[]) => {
  let bytes = 4;
  for (const value of values) bytes += textBound(value);
  return bytes;
};
const bodyBound = (body: Uint8Array | string | undefined) =>
  body === undefined ? 0 : typeof body === 'string' ? textBound(body) : 4 + body.length;

/** The pieces (but `isCredential`, a function the caller keeps) as one buffer of their exact size. */
export function packExchange(pieces: ExchangePieces): Buffer {
  const bound =
    // Four tags, two numbers.
    4 +
    2 * 8 +
    textBound(pieces.httpVersion) +
    textBound(pieces.query) +
    listBound(pieces.requestHeaders) +
    bodyBound(pieces.requestBody) +
    listBound(pieces.responseHeaders) +
    bodyBound(pieces.responseBody);
  target = slabSlice(bound);
  at = 0;
  writeTag(pieces.httpVersion !== undefined);
  if (pieces.httpVersion !== undefined) writeString(pieces.httpVersion);
  writeTag(pieces.query !== undefined);
  if (pieces.query !== undefined) writeString(pieces.query);
  writeList(pieces.requestHeaders);
  writeBody(pieces.requestBody);
  writeNumber(pieces.requestBodyBytes);
  writeList(pieces.responseHeaders);
  writeBody(pieces.responseBody);
  writeNumber(pieces.responseBodyBytes ?? -1);
  return keepOnly(target, at);
}

/**
 * A copy of `bytes` an entry keeps until it is read (the request body its readings need), on the packs'
 * slabs: a copy from Node's pool would keep the pool's whole 8 KiB slab alive, with the answers written
 * from it.
 */
export function keptCopy(bytes: Uint8Array): Buffer {
  const copy = slabSlice(bytes.length);
  copy.set(bytes);
  return copy;
}

/**
 * The packs' own slabs: a usual exchange's pack is a slice of a 64 KiB slab that only packs share, so
 * entries recorded one after another fill slabs densely and a slab is let go once its entries are (Node's
 * buffer pool would mix them with each request's short-lived buffers, and keep a slab per two entries).
 */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

function slabSlice(bytes: number): Buffer {
  if (bytes > SLAB_BYTES / 8) return Buffer.allocUnsafeSlow(bytes);
  if (slabUsed + bytes > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const slice = slab.subarray(slabUsed, slabUsed + bytes);
  slabUsed += bytes;
  return slice;
}

/** The first `used` bytes of a slice `slabSlice` gave; the rest goes back to the slab when it was the last. */
function keepOnly(slice: Buffer, used: number): Buffer {
  if (slice.buffer === slab.buffer && slice.byteOffset + slice.length === slabUsed)
    slabUsed -= slice.length - used;
  return slice.subarray(0, used);
}

/** The pieces `packExchange` packed; the bodies as views of `packed` (bytes, whatever they were given as). */
export function unpackExchange(packed: Buffer): ExchangePieces {
  let offset = 0;
  const tag = () => packed[offset++] === 1;
  const number = () => {
    const value = packed.readDoubleLE(offset);
    offset += 8;
    return value;
  };
  const bytes = () => {
    const length = packed.readUInt32LE(offset);
    offset += 4 + length;
    return packed.subarray(offset - length, offset);
  };
  const string = () => bytes().toString('utf8');
  const list = () => {
    const count = packed.readUInt32LE(offset);
    offset += 4;
    return Array.from({ length: count }, string);
  };
  const httpVersion = tag() ? string() : undefined;
  const query = tag() ? string() : undefined;
  const requestHeaders = list();
  const requestBody = tag() ? bytes() : undefined;
  const requestBodyBytes = number();
  const responseHeaders = list();
  const responseBody = tag() ? bytes() : undefined;
  const responseBodyBytes = number();
  return {
    requestHeaders,
    ...(query !== undefined ? { query } : {}),
    requestBody,
    requestBodyBytes,
    responseHeaders,
    responseBody,
    ...(responseBodyBytes >= 0 ? { responseBodyBytes } : {}),
    ...(httpVersion !== undefined ? { httpVersion } : {}),
  };
}
