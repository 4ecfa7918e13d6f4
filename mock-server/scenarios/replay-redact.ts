/*
 * What the converter redacts beyond the journal's secret scan, for recordings from other tools: opaque
 * credentials (session ids, CSRF tokens, cloud keys, signed-URL signatures) match no secret pattern, so they
 * are told by the name they go by: a header, a query or form parameter, a JSON field. A scenario meant to be
 * shared needs none of them to replay rate-limit behaviour. The names are the journal's own rule
 * (secrets/credential-names.ts).
 */
import { speaksOfCredential } from '../secrets/credential-names.ts';

const PARAMETER = /([?&;]|^|\s)([A-Za-z0-9_.-]+)=([^&\s"'<>#;]+)/g;

/** Text with the values of credential query or form parameters (`access_token=...`) redacted. */
export const redactParameters = (text: string) =>
  text.replace(PARAMETER, (whole, before: string, name: string) =>
    speaksOfCredential(name) ? `${before}${name}=[REDACTED]` : whole,
  );

// A credential field's value that cannot be one: short (a reason, `expired`) or a time (`token_expires_at`).
const mayBeSecret = (v: string) =>
  v.length >= 8 && !/^\d{4}-\d{2}-\d{2}T/.test(v) && !v.startsWith('[REDACTED');

/** A parsed JSON body with the string values of credential fields redacted, and parameters in strings. */
export function redactJsonFields(value: unknown): unknown {
  if (typeof value === 'string') return redactParameters(value);
  if (Array.isArray(value)) return value.map(redactJsonFields);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      typeof v === 'string' && speaksOfCredential(key) && mayBeSecret(v) ? '[REDACTED]' : redactJsonFields(v),
    ]),
  );
}
