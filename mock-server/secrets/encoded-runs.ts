import { asText } from '../text-encodings.ts';
import type { Finding } from './findings.ts';
import { originOf, type View } from './readings.ts';

/** Scans a decoded text (a reading of its own) for every secret, into `found`. */
type ScanDecoded = (found: Finding[], view: View) => void;

// Characters of base64 and base64url (`+/` and `-_`), by char code.
const BASE64_CHAR = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_')
  BASE64_CHAR[char.charCodeAt(0)] = 1;
// The shortest run that can hold a secret: base64 of 8 characters (hex needs 16).
const SHORTEST_RUN = 12;
const isHexDigit = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
const isTextHexLead = (code: number) => code >= 50 && code <= 55;
const isTextBase64Lead = (code: number) => (code >= 73 && code <= 90) || (code >= 97 && code <= 102);

/** How the characters `start..end` of `text` (padding excluded) may encode text: `hex`, `base64`, or neither. */
function encodingOf(text: string, start: number, end: number): 'hex' | 'base64' | undefined {
  const length = end - start;
  // Misses allowed at the leading positions: 10% of them.
  let hexMisses = length >= 16 ? Math.floor(0.1 * Math.ceil(length / 2)) : -1;
  let base64Misses = Math.floor(0.1 * Math.ceil(length / 4));
  for (let i = start; i < end && (hexMisses >= 0 || base64Misses >= 0); i++) {
    const code = text.charCodeAt(i);
    const k = i - start;
    if (hexMisses >= 0 && (!isHexDigit(code) || (k % 2 === 0 && !isTextHexLead(code)))) {
      if (!isHexDigit(code)) hexMisses = -1;
      else hexMisses--;
    }
    if (k % 4 === 0 && !isTextBase64Lead(code)) base64Misses--;
  }
  if (hexMisses >= 0) return 'hex';
  return base64Misses >= 0 ? 'base64' : undefined;
}

const BASE32_RUN = /^(?:[A-Z2-7]+|[a-z2-7]+)$/;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** What a base32 run (one case, no padding) decodes to as text, or undefined. */
function decodeBase32(run: string): string | undefined {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of run.toUpperCase()) {
    value = (value << 5) | BASE32_ALPHABET.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return asText(Buffer.from(bytes));
}

/** What a candidate run decodes to as text, or undefined. */
function decodeRun(run: string, encoding: 'hex' | 'base64'): string | undefined {
  if (encoding === 'hex') return asText(Buffer.from(run.length % 2 === 0 ? run : run.slice(0, -1), 'hex'));
  // Node's base64 decoder reads both alphabets (`+/` and `-_`) and needs no padding.
  return asText(Buffer.from(run, 'base64'));
}

/**
 * Secrets inside encoded runs of a reading: each run of SHORTEST_RUN or more base64 characters (and each of
 * its `/`-separated parts, where a URL path wraps a base64url blob) that decodes to text is scanned like a
 * reading, and a run holding a secret is redacted whole (with its padding). A loop over char codes finds the
 * runs: text without a candidate costs no regular expression and no allocation.
 */
export function scanEncodedRuns(found: Finding[], view: View, scanDecoded: ScanDecoded) {
  const { text } = view;
  let start = -1;
  let slashed = false;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : -1;
    if (code >= 0 && code < 128 && BASE64_CHAR[code] === 1) {
      if (start < 0) {
        start = i;
        slashed = false;
      }
      if (code === 47) slashed = true;
      continue;
    }
    if (start < 0) continue;
    if (i - start >= SHORTEST_RUN) scanRun(found, view, scanDecoded, start, i, slashed);
    start = -1;
  }
}

/** One run at `start..end` of a reading: the run whole, then its `/`-separated parts. */
function scanRun(
  found: Finding[],
  view: View,
  scanDecoded: ScanDecoded,
  start: number,
  end: number,
  slashed: boolean,
) {
  const { text } = view;
  if (tryPart(found, view, scanDecoded, start, end) || !slashed) return;
  let from = start;
  for (let i = start; i <= end; i++) {
    if (i < end && text.charCodeAt(i) !== 47) continue;
    if (i - from >= SHORTEST_RUN && i - from < end - start && tryPart(found, view, scanDecoded, from, i))
      return;
    from = i + 1;
  }
}

/** Decodes `start..end` if it can be encoded text; a secret inside redacts it whole. True when one was. */
function tryPart(
  found: Finding[],
  view: View,
  scanDecoded: ScanDecoded,
  start: number,
  end: number,
): boolean {
  const { text } = view;
  const run = text.slice(start, end);
  const encoding = encodingOf(text, start, end);
  // base32 (RFC 4648) in either case: a host label, which DNS lower-cases, carries it that way.
  const decoded =
    (BASE32_RUN.test(run) ? decodeBase32(run) : undefined) ??
    (encoding === undefined ? undefined : decodeRun(run, encoding));
  if (decoded === undefined) return false;
  const inner: Finding[] = [];
  scanDecoded(inner, { text: decoded });
  if (!inner.some((f) => f.kind)) return false;
  let padded = end;
  while (padded < text.length && padded - end < 2 && text.charCodeAt(padded) === 61) padded++;
  const from = originOf(view, start);
  const to = originOf(view, padded);
  for (const kind of new Set(inner.flatMap((f) => (f.kind ? [f.kind] : []))))
    found.push({ start: from, end: to, kind });
  return true;
}
