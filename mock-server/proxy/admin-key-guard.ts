import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../errors.ts';
import { readSentBody } from '../http/sent-body.ts';
import { PREFIX } from '../secrets/known-secrets.ts';
import { rot13 } from '../text-encodings.ts';
import type { CarriesAdminKey } from './wire.ts';

/*
 * The proxy's guard on a request body it forwards: the body streams through a Transform that scans a sliding
 * window (the bytes held back from before and the new chunk) for the proxy's admin key with the same watch as
 * its URL and headers (`adminKeyWatch`: in any case, percent-encoded up to 4 times, base64 or base64url at any
 * alignment, hex, rot13, inside a Basic credential). Only bytes that can no longer be part of an encoded key
 * are passed on: the last `holdBack` bytes wait for the next chunk (or the body's end). On a hit nothing more
 * is passed on and the exchange is refused (the proxy aborts the target's request: the target never gets a
 * whole one). A compressed body (any Content-Encoding) is held whole, up to `server.max_body_bytes`, decoded
 * by the one body reader (`http/sent-body.ts`) and scanned before any of it is sent; one larger, or one that
 * does not decode, cannot be scanned and is refused.
 */

/** Why the guard refuses a body: the error the agent gets and the journal's `fault`. */
export interface BodyRefusal {
  error: GatewayError;
  fault: string;
}

/**
 * Bytes held back: the longest spelling of the key the watch reads (percent-encoded 4 times is 9 characters a
 * character; base64 of that 12), with room for an encoded group cut at either end.
 */
export const holdBackFor = (adminKey: string) => Math.max(1024, 12 * Buffer.byteLength(adminKey) + 16);

// Characters of a base64, base64url, hex or base32 run (the scan decodes a run from its first character).
const RUN_CHAR = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_')
  RUN_CHAR[char.charCodeAt(0)] = 1;
const inRun = (text: string, at: number) => {
  const code = text.charCodeAt(at);
  return code < 128 && RUN_CHAR[code] === 1;
};
// A run cut between two windows is cut a multiple of this many characters from its start: the next window
// reads it in the same groups as a scan of the whole body would (base64: 4, hex: 2, base32: 8).
const GROUP = 8;

/**
 * Where to cut a window: `holdBack` bytes from its end, moved back (at most GROUP - 1 bytes) so that a run
 * it falls in is cut a whole number of groups from the run's start. A run that began before this window is
 * counted from the window's start, which was itself cut that way.
 */
function cutAt(text: string, holdBack: number): number {
  let clear = Math.max(0, text.length - holdBack);
  if (clear === 0 || !inRun(text, clear - 1) || !inRun(text, clear)) return clear;
  let start = clear - 1;
  while (start > 0 && inRun(text, start - 1)) start--;
  clear -= (clear - start) % GROUP;
  return clear;
}

const ESCAPES = /%[0-9A-Fa-f]{2}/g;
const inRunOrEscape = (text: string, at: number) => inRun(text, at) || text.charCodeAt(at) === 37;

/**
 * What of a window the watch must read to find the key, if it can be there: most bodies hold none of it,
 * and then the whole scan is skipped. Without a percent-escape (nor a `+` when the key holds a space) the text
 * is the watch's one reading, and there it finds the key as sent or rot13'd, in any case, or inside a base64,
 * base64url, hex or base32 run at least as long as the key: without such a run nor the key, nothing. A
 * reading that decodes escapes differs from the text only near them: each escape with `reach` characters
 * either side (and the whole of a run it falls in) is read, not the rest.
 */
function partsToRead(adminKey: string, reach: number) {
  // In any case (a regular expression's case folding finds more than ASCII's: then the whole scan decides).
  const literal = new RegExp(
    [adminKey, rot13(adminKey)].map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'i',
  );
  const spaced = adminKey.includes(' ');
  return (text: string): string[] => {
    if (spaced && text.includes('+')) return [text];
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      run = code < 128 && RUN_CHAR[code] === 1 ? run + 1 : 0;
      if (run >= adminKey.length) return [text];
    }
    if (literal.test(text)) return [text];
    const parts: string[] = [];
    let from = -1;
    let to = -1;
    for (const match of text.matchAll(ESCAPES)) {
      let start = Math.max(0, match.index - reach);
      while (start > 0 && inRunOrEscape(text, start - 1)) start--;
      if (start <= to)
        start = from; // overlaps the part before: one part
      else if (to >= 0) parts.push(text.slice(from, to));
      let end = Math.min(text.length, match.index + 3 + reach);
      while (end < text.length && inRunOrEscape(text, end)) end++;
      from = start;
      to = end;
    }
    if (to >= 0) parts.push(text.slice(from, to));
    return parts;
  };
}

/**
 * The sliding-window scan of a stream of bytes: `push` gives back the bytes that are clear to pass on (or
 * `undefined` once the key was seen), `end` the rest once scanned. New bytes are scanned once at least
 * `holdBack` of them have come (or at the end), so a body sent a byte at a time costs no more to scan than
 * one sent whole. The bytes are read as latin1 (one character a byte: an ASCII spelling stays as sent); a
 * key with other characters is also looked for in the UTF-8 reading.
 */
export function createWindowScan(carries: CarriesAdminKey, adminKey: string) {
  const holdBack = holdBackFor(adminKey);
  const utf8 = !/^[\x20-\x7e]*$/.test(adminKey);
  // A key shorter than the scan's shortest literal is looked for more simply (adminKeyWatch): no quick test.
  const toRead = adminKey.length >= PREFIX ? partsToRead(adminKey, holdBack) : (text: string) => [text];
  const found = (text: string) => toRead(text).some(carries);
  let tail = Buffer.alloc(0);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let hit = false;
  const scan = (): Buffer | undefined => {
    if (hit) return undefined;
    const window = Buffer.concat([tail, ...pending]);
    pending = [];
    pendingBytes = 0;
    const text = window.toString('latin1');
    if (found(text) || (utf8 && found(window.toString('utf8')))) {
      hit = true;
      tail = Buffer.alloc(0);
      return undefined;
    }
    const clear = cutAt(text, holdBack);
    tail = window.subarray(clear);
    return window.subarray(0, clear);
  };
  return {
    push(chunk: Buffer): Buffer | undefined {
      if (hit) return undefined;
      pending.push(chunk);
      pendingBytes += chunk.length;
      return pendingBytes >= holdBack ? scan() : Buffer.alloc(0);
    },
    end(): Buffer | undefined {
      if (pendingBytes === 0) return hit ? undefined : tail;
      const clear = scan();
      return clear && Buffer.concat([clear, tail]);
    },
  };
}

/**
 * Runs the watch once over a text that takes each of its paths (escapes, an encoded run, prose), so that its
 * first use (compiling its expressions, warming its code: a tenth of a second or more on a loaded machine)
 * is paid when the proxy starts, not while the first guarded body holds up the proxy's timers.
 */
export function warmUpWatch(carries: CarriesAdminKey): void {
  const run = Buffer.from('the quick brown fox jumps over the lazy dog, '.repeat(40)).toString('base64');
  carries(`{"q":"a%20b%2520c","blob":"${run}","hex":"${Buffer.from('lazy dog').toString('hex')}"} prose`);
}

/** What a guard needs: the watch and its key, how the body is coded, and the cap on a compressed body. */
export interface AdminKeyGuardOptions {
  carries: CarriesAdminKey;
  adminKey: string;
  contentEncoding: string | undefined;
  contentType: string | undefined;
  /** `server.max_body_bytes`: a compressed body is held whole, and decoded, up to this many bytes. */
  maxBodyBytes: number;
  /** Called once when the body is refused; nothing more passes the guard. */
  refuse(refusal: BodyRefusal): void;
}

const KEY_IN_BODY: () => BodyRefusal = () => ({
  fault: 'proxy:admin_key_in_body',
  error: new GatewayError('invalid_request', {
    message:
      "The request's body carries the proxy's admin key: it is not forwarded to the target. Send the key only in X-Admin-Key, to /__admin.",
    details: { proxy: true },
  }),
});

const unscannable = (error: GatewayError): BodyRefusal => ({ fault: 'proxy:body_not_scanned', error });

/** The Transform a request body is piped through on its way to the target. */
export function adminKeyGuard(options: AdminKeyGuardOptions): Transform {
  let refused = false;
  const once = {
    ...options,
    refuse(refusal: BodyRefusal) {
      if (refused) return;
      refused = true;
      options.refuse(refusal);
    },
  };
  const coded = (options.contentEncoding ?? '')
    .split(',')
    .some((coding) => !['', 'identity'].includes(coding.trim().toLowerCase()));
  return coded ? heldWhole(once) : streamed(once);
}

function streamed(options: AdminKeyGuardOptions): Transform {
  const scan = createWindowScan(options.carries, options.adminKey);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const clear = scan.push(chunk);
      if (clear === undefined) {
        // Refused at the first hit; nothing more passes (the guard is unpiped by then).
        options.refuse(KEY_IN_BODY());
        return callback();
      }
      if (clear.length === 0) return callback();
      // A stretch was read: the next waits a turn of the event loop, so a large body read in one go (a pipe
      // resumed with many chunks buffered) never holds up the proxy's timers and other exchanges.
      setImmediate(() => callback(null, clear));
    },
    flush(callback: TransformCallback) {
      const rest = scan.end();
      // Refused: the body never ends on the target's side.
      if (rest === undefined) return options.refuse(KEY_IN_BODY());
      callback(null, rest.length > 0 ? rest : undefined);
    },
  });
}

/** A compressed body: held whole (capped), decoded and scanned, then passed on as sent, or refused. */
function heldWhole(options: AdminKeyGuardOptions): Transform {
  const { maxBodyBytes, contentEncoding } = options;
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      size += chunk.length;
      if (over || size > maxBodyBytes) {
        if (!over)
          options.refuse(
            unscannable(
              new GatewayError('payload_too_large', {
                message: `The request's body is compressed (Content-Encoding: ${contentEncoding}) and over ${maxBodyBytes} bytes (server.max_body_bytes): the proxy cannot scan it for its admin key, so it is not forwarded. Send it uncompressed (scanned as it streams) or raise server.max_body_bytes.`,
                details: { proxy: true, max_body_bytes: maxBodyBytes },
              }),
            ),
          );
        over = true;
        chunks.length = 0;
        return callback();
      }
      chunks.push(chunk);
      callback();
    },
    flush(callback: TransformCallback) {
      if (over) return; // refused: the body never ends on the target's side
      const body = Buffer.concat(chunks, size);
      const read = readSentBody(body, { contentEncoding, contentType: options.contentType }, maxBodyBytes);
      if (read.decoded === undefined && size > 0) {
        options.refuse(
          unscannable(
            new GatewayError('invalid_request', {
              message: `The request's body could not be decoded to scan it for the proxy's admin key (${read.unreadable ?? 'unreadable'}): it is not forwarded.`,
              details: { proxy: true },
            }),
          ),
        );
        return;
      }
      if (
        scansClear(options, body) &&
        (read.decoded === undefined || scansClear(options, Buffer.from(read.decoded)))
      )
        return callback(null, size > 0 ? body : undefined);
      options.refuse(KEY_IN_BODY());
    },
  });
}

// A held body is scanned in slices of this many bytes, through the same sliding window as a streamed one.
const SLICE = 64 * 1024;

/** Whether bytes held whole are clear of the key. */
function scansClear(options: AdminKeyGuardOptions, bytes: Buffer): boolean {
  const scan = createWindowScan(options.carries, options.adminKey);
  for (let at = 0; at < bytes.length; at += SLICE)
    if (scan.push(bytes.subarray(at, at + SLICE)) === undefined) return false;
  return scan.end() !== undefined;
}
