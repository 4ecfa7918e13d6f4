import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { type IsCredentialName, speaksOfCredential } from '../secrets/credential-names.ts';
import {
  redactCredentialHeader,
  redactCredentials,
  redactCredentialText,
} from '../secrets/credential-redaction.ts';

/**
 * What the journal keeps of an exchange's headers, query and bodies (`journal.body_bytes`), redacted: the
 * identity header becomes its fingerprint, credentials are replaced by where they sit (a header, JSON field,
 * form or query parameter, multipart part or cookie whose name speaks of one) and every value and body goes
 * through the secret scan that knows the caller's token. A body is redacted before it is cut to its first
 * `body_bytes`.
 *
 * The hot path only takes the pieces (the header list as parsed, the start of each body: a slice); the
 * redaction, which costs a secret scan per value, runs when the entry is first read (admin API, dashboard,
 * export), once. Until then the pieces, and the token the scan needs, stay in this process's memory only,
 * bounded by the journal's capacity; nothing unredacted is ever listed, exported or written to a shared store.
 */

/** Headers and the start of the bodies of one exchange, redacted (see `JournalEntry.exchange`). */
export interface JournalExchange {
  request_headers: [string, string][];
  /** The request's query string (without `?`), redacted; absent when it had none. */
  query?: string;
  request_body?: string;
  request_body_bytes: number;
  response_headers: [string, string][];
  response_body?: string;
  response_body_bytes: number;
  /** HTTP version of the request, e.g. `1.1`. */
  http_version?: string;
}

/**
 * Headers whose value is a credential whatever it looks like, and which the record stage does not scan as a
 * leaked secret (a credential presented to the gateway is its credential channel). The journal redacts more
 * (every name that speaks of a credential: `credential-names.ts`).
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
// Shorter values cannot hold a secret the scan knows (tokens, API keys and their 16-character pieces).
const SCANNED_FROM = 16;

type Redact = (text: string) => string;

/**
 * The one redaction of a text anything keeps (the journal and its exports, findings, logs, a converted
 * scenario): the credentials by where they sit (`redactCredentials`: names, quoted and encoded texts, schemes),
 * then the secret scan (`redact`: known keys, the admin key, well-known shapes, in any encoding).
 */
export const redactText = (
  text: string,
  redact: Redact,
  isCredential: IsCredentialName = speaksOfCredential,
) => redact(redactCredentials(text, isCredential));

/**
 * Header pairs as sent (`rawHeaders` order and spelling), redacted: the identity header becomes its
 * fingerprint; a header whose name speaks of a credential (`Private-Token`, `X-Auth-Token`, `Cookie`, a
 * target's `x-upstream-token`, any prefix, any case) keeps only its scheme or cookie names; every other
 * value loses the credentials it carries by place (`?access_token=`, `https://user:pass@`, `Bearer ...`, JSON
 * in it) and goes through the secret scan.
 */
export function redactHeaderPairs(
  raw: readonly string[],
  redact: Redact,
  isCredential: IsCredentialName = speaksOfCredential,
): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (lower === IDENTITY_HEADER_KEY) {
      const token = value.trim();
      out.push([name, token ? `[REDACTED:${tokenFingerprint(token)}]` : value]);
    } else if (isCredential(name) || lower === 'x-admin-key')
      out.push([name, redactCredentialHeader(lower, value)]);
    else {
      const placed = redactCredentials(value, isCredential);
      out.push([name, placed.length < SCANNED_FROM ? placed : redact(placed)]);
    }
  }
  return out;
}

/**
 * Bytes read past `journal.body_bytes` before a body is redacted, then cut: a credential that the cut would
 * split (a JSON string, a key of a known shape) is found whole first. A credential value still open where
 * even these end is redacted to the end.
 */
const REDACTION_MARGIN = 1024;

/** How many bytes of a body to take for a journal that keeps `keep` of them (0 keeps none). */
export const capturedBytes = (keep: number) => (keep > 0 ? keep + REDACTION_MARGIN : 0);

/** The start of a body, cheaply: a slice of a string, a view of the first bytes of a buffer. */
export function bodyStart(body: Uint8Array | string, max: number): Uint8Array | string | undefined {
  if (max <= 0 || body.length === 0) return undefined;
  if (typeof body === 'string') return body.length <= max ? body : body.slice(0, max);
  // A view: the journal copies what it keeps into its record at once (record-bytes.ts).
  return body.length <= max ? body : body.subarray(0, max);
}

/**
 * A body's start as text, redacted, then cut to at most `max` bytes: the credentials by place (multipart
 * parts, JSON fields at any depth, form and query pairs, schemes), then the secret scan, on everything taken
 * (`capturedBytes(max)`), and only then the cut, so no credential survives in part. A body that is not text
 * (a NUL byte, or invalid UTF-8 in what is kept) is kept as `[binary]`.
 */
export function captureBody(
  kept: Uint8Array | string | undefined,
  max: number,
  redact: Redact,
  isCredential: IsCredentialName = speaksOfCredential,
  total?: number,
): string | undefined {
  if (kept === undefined || kept.length === 0 || max <= 0) return undefined;
  const bytes = typeof kept === 'string' ? Buffer.from(kept) : kept;
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  // A multi-byte character cut at the end of what was taken is not a sign of binary.
  if ((total === undefined || total > bytes.length) && text.endsWith('\ufffd')) text = text.slice(0, -1);
  if (text.includes('\u0000') || text.includes('\ufffd')) return '[binary]';
  const redacted = redactText(text, redact, isCredential);
  if (Buffer.byteLength(redacted) <= max) return redacted;
  const cut = Buffer.from(redacted).subarray(0, max).toString('utf8');
  return cut.endsWith('\ufffd') ? cut.slice(0, -1) : cut;
}

/** The raw pieces of an exchange, taken on the hot path. */
export interface ExchangePieces {
  requestHeaders: readonly string[];
  /** The request's query string without `?` (redacted into `JournalExchange.query`). */
  query?: string;
  requestBody?: Uint8Array | string;
  requestBodyBytes: number;
  responseHeaders: readonly string[];
  responseBody?: Uint8Array | string;
  /** The whole response body's size in bytes; absent when `responseBody` is all of it. */
  responseBodyBytes?: number;
  httpVersion?: string;
  /** The names redacted as credentials (default: every name that speaks of one; the proxy's `keepFields` lift some). */
  isCredential?: IsCredentialName;
}

/** The redacted exchange of its pieces. */
export function redactExchange(pieces: ExchangePieces, keep: number, redact: Redact): JournalExchange {
  const isCredential = pieces.isCredential ?? speaksOfCredential;
  const responseBytes =
    pieces.responseBodyBytes ??
    (typeof pieces.responseBody === 'string'
      ? Buffer.byteLength(pieces.responseBody)
      : (pieces.responseBody?.length ?? 0));
  const query = pieces.query ? redact(redactCredentialText(pieces.query, isCredential)) : undefined;
  return {
    request_headers: redactHeaderPairs(pieces.requestHeaders, redact, isCredential),
    ...(query ? { query } : {}),
    request_body: captureBody(pieces.requestBody, keep, redact, isCredential, pieces.requestBodyBytes),
    request_body_bytes: pieces.requestBodyBytes,
    response_headers: redactHeaderPairs(pieces.responseHeaders, redact, isCredential),
    response_body: captureBody(pieces.responseBody, keep, redact, isCredential, responseBytes),
    response_body_bytes: responseBytes,
    ...(pieces.httpVersion ? { http_version: pieces.httpVersion } : {}),
  };
}
