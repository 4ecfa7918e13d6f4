import { tokenFingerprint } from './pipeline/identify.ts';

/**
 * What the journal keeps of an exchange's headers and bodies (`journal.body_bytes`), redacted: the identity
 * header becomes its fingerprint, credentials are replaced whole, and every other value and body goes
 * through the secret scan that knows the caller's token. Only the first `body_bytes` of a body are kept.
 */

/** Headers whose value is a credential whatever it looks like: never kept. */
const CREDENTIAL_HEADERS = new Set([
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

export type Redact = (text: string) => string;

/** Header pairs as sent (`rawHeaders` order and spelling), redacted. */
export function redactHeaderPairs(raw: readonly string[], redact: Redact): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (lower === 'x-agent-identity') {
      const token = value.trim();
      out.push([name, token ? `[REDACTED:${tokenFingerprint(token)}]` : value]);
    } else if (CREDENTIAL_HEADERS.has(lower)) out.push([name, '[REDACTED]']);
    else out.push([name, redact(value)]);
  }
  return out;
}

/** Header pairs from a record of lower-case names (the gateway's own answers). */
export const redactHeaderRecord = (headers: Readonly<Record<string, string>>, redact: Redact) =>
  redactHeaderPairs(Object.entries(headers).flat(), redact);

/**
 * The first `max` bytes of a body as text, redacted: credential fields of JSON replaced, then the secret
 * scan. A body that is not text (a NUL byte, or invalid UTF-8 in what is kept) is kept as `[binary]`.
 */
export function captureBody(bytes: Uint8Array | string, max: number, redact: Redact): string | undefined {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size === 0 || max <= 0) return undefined;
  let text: string;
  if (typeof bytes === 'string')
    text = size <= max ? bytes : Buffer.from(bytes).subarray(0, max).toString('utf8');
  else text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(max, bytes.length)).toString('utf8');
  // A multi-byte character cut at the end is not a sign of binary.
  const body = text.endsWith('\ufffd') && size > max ? text.slice(0, -1) : text;
  if (body.includes('\u0000') || body.includes('\ufffd')) return '[binary]';
  return redact(body.replace(CREDENTIAL_FIELDS, '$1"[REDACTED]"'));
}
