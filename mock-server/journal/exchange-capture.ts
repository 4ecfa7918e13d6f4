import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';

/**
 * What the journal keeps of an exchange's headers and bodies (`journal.body_bytes`), redacted: the identity
 * header becomes its fingerprint, credentials are replaced whole, and every other value and body goes
 * through the secret scan that knows the caller's token. Only the first `body_bytes` of a body are kept.
 *
 * The hot path only takes the pieces (the header list as parsed, the start of each body: a slice); the
 * redaction, which costs a secret scan per value, runs when the entry is first read (admin API, dashboard,
 * export), once. Until then the pieces, and the token the scan needs, stay in this process's memory only,
 * bounded by the journal's capacity; nothing unredacted is ever listed, exported or written to a shared store.
 */

/** Headers and the start of the bodies of one exchange, redacted (see `JournalEntry.exchange`). */
export interface JournalExchange {
  request_headers: [string, string][];
  request_body?: string;
  request_body_bytes: number;
  response_headers: [string, string][];
  response_body?: string;
  response_body_bytes: number;
  /** HTTP version of the request, e.g. `1.1`. */
  http_version?: string;
}

/** A journal entry as the capture sees it: where the redacted exchange goes. */
type WithExchange = { exchange?: JournalExchange };

/**
 * Headers whose value is a credential whatever it looks like: never kept here, and never scanned as a leaked
 * secret by the record stage (a credential presented to the gateway is its credential channel).
 */
export const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-admin-key',
  'x-api-key',
  'api-key',
]);
/** JSON string fields that hold credentials (the identity provider's `api_key` in, `token` out). */
const CREDENTIAL_FIELDS =
  /("(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|token|secret|client[_-]?secret|password)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
// Shorter values cannot hold a secret the scan knows (tokens, API keys and their 16-character pieces).
const SCANNED_FROM = 16;

export type Redact = (text: string) => string;

/** Header pairs as sent (`rawHeaders` order and spelling), redacted. */
export function redactHeaderPairs(raw: readonly string[], redact: Redact): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (lower === IDENTITY_HEADER_KEY) {
      const token = value.trim();
      out.push([name, token ? `[REDACTED:${tokenFingerprint(token)}]` : value]);
    } else if (CREDENTIAL_HEADERS.has(lower)) out.push([name, '[REDACTED]']);
    else out.push([name, value.length < SCANNED_FROM ? value : redact(value)]);
  }
  return out;
}

/** Header pairs from a record of lower-case names (the gateway's own answers). */
export const redactHeaderRecord = (headers: Readonly<Record<string, string>>, redact: Redact) =>
  redactHeaderPairs(Object.entries(headers).flat(), redact);

/** The start of a body, cheaply: a slice of a string, a copy of the first bytes of a buffer. */
export function bodyStart(body: Uint8Array | string, max: number): Uint8Array | string | undefined {
  if (max <= 0 || body.length === 0) return undefined;
  if (typeof body === 'string') return body.length <= max ? body : body.slice(0, max);
  // A short body is kept as it is (it is not reused); a long one's start is copied, so it can be let go.
  return body.length <= max ? body : Buffer.from(body.subarray(0, max));
}

/**
 * A kept body start as text, at most `max` bytes, redacted: credential fields of JSON replaced, then the
 * secret scan. A body that is not text (a NUL byte, or invalid UTF-8 in what is kept) is kept as `[binary]`.
 */
export function captureBody(
  kept: Uint8Array | string | undefined,
  max: number,
  redact: Redact,
): string | undefined {
  if (kept === undefined || kept.length === 0 || max <= 0) return undefined;
  const bytes = typeof kept === 'string' ? Buffer.from(kept) : kept;
  const cut = bytes.length > max;
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(max, bytes.length)).toString('utf8');
  // A multi-byte character cut at the end is not a sign of binary.
  if (cut && text.endsWith('\ufffd')) text = text.slice(0, -1);
  if (text.includes('\u0000') || text.includes('\ufffd')) return '[binary]';
  return redact(text.replace(CREDENTIAL_FIELDS, '$1"[REDACTED]"'));
}

/** The raw pieces of an exchange, taken on the hot path. */
export interface ExchangePieces {
  requestHeaders: readonly string[];
  requestBody?: Uint8Array | string;
  requestBodyBytes: number;
  responseHeaders: readonly string[];
  responseBody?: Uint8Array | string;
  /** The whole response body's size in bytes; absent when `responseBody` is all of it. */
  responseBodyBytes?: number;
  httpVersion?: string;
}

/** The redacted exchange of its pieces. */
export function redactExchange(pieces: ExchangePieces, keep: number, redact: Redact): JournalExchange {
  return {
    request_headers: redactHeaderPairs(pieces.requestHeaders, redact),
    request_body: captureBody(pieces.requestBody, keep, redact),
    request_body_bytes: pieces.requestBodyBytes,
    response_headers: redactHeaderPairs(pieces.responseHeaders, redact),
    response_body: captureBody(pieces.responseBody, keep, redact),
    response_body_bytes:
      pieces.responseBodyBytes ??
      (typeof pieces.responseBody === 'string'
        ? Buffer.byteLength(pieces.responseBody)
        : (pieces.responseBody?.length ?? 0)),
    ...(pieces.httpVersion ? { http_version: pieces.httpVersion } : {}),
  };
}

// Entries whose exchange is still to be redacted (a WeakMap: the entry's shape is left alone).
const pending = new WeakMap<WithExchange, () => JournalExchange>();

/** Leaves the exchange to be redacted when the entry is first read (not copied, listed or serialised). */
export function deferExchange(entry: WithExchange, build: () => JournalExchange): void {
  pending.set(entry, build);
}

/** Redacts a deferred exchange into the entry, once, and lets go of its pieces. */
export function settleExchange(entry: WithExchange): void {
  const build = pending.get(entry);
  if (!build) return;
  pending.delete(entry);
  entry.exchange = build();
}
