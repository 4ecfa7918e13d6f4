import { PREFIX } from '../secrets/known-secrets.ts';
import { createSecretScanner } from '../secrets/secrets.ts';

/* The proxy's HTTP plumbing: which headers pass through, and how much of a body is kept to read. */

/** Hop-by-hop headers (RFC 9110 section 7.6.1), never forwarded either way; plus Expect, which this hop answered. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** Raw header pairs without hop-by-hop ones (and those the Connection header names). */
export function endToEnd(raw: readonly string[], drop?: (lower: string) => boolean): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === 'connection')
      for (const token of (raw[i + 1] as string).split(',')) named.add(token.trim().toLowerCase());
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = (raw[i] as string).toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower) || drop?.(lower)) continue;
    out.push(raw[i] as string, raw[i + 1] as string);
  }
  return out;
}

export const headerOf = (raw: readonly string[], name: string): string | undefined => {
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) return raw[i + 1];
  return undefined;
};

/** Collects the first `max` bytes of a stream's chunks, counting all of them. */
export function collector(max: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    add(chunk: Buffer) {
      total += chunk.length;
      if (kept >= max) return;
      const part = kept + chunk.length <= max ? chunk : chunk.subarray(0, max - kept);
      chunks.push(part);
      kept += part.length;
    },
    get total() {
      return total;
    },
    /** What was kept; `whole` when it is all of it. */
    bytes: () => Buffer.concat(chunks, kept),
    get whole() {
      return kept === total;
    },
  };
}

/** The first bytes of a body and the count of all of them. */
export type Collector = ReturnType<typeof collector>;

/** Whether a text (a header's name or value, a URL) carries the proxy's admin key, in any encoding. */
export type CarriesAdminKey = (text: string) => boolean;

/**
 * The proxy's watch for its own admin key: the secret scan that knows only that key, so every spelling it
 * reads is caught (as sent, in any case, percent-encoded once or more, base64 or base64url, inside a Basic
 * credential `user:KEY`, hex, rot13). A key shorter than the scan's shortest literal (the library allows
 * one) is looked for as sent and percent-decoded.
 */
export function adminKeyWatch(adminKey: string | undefined): CarriesAdminKey {
  if (!adminKey) return () => false;
  if (adminKey.length < PREFIX)
    return (text) => text.includes(adminKey) || decodedOnce(text).includes(adminKey);
  const scan = createSecretScanner({ version: () => 0, keys: () => [], canaries: [], adminKeys: [adminKey] });
  return (text) => text.length >= PREFIX && scan(text, {}).kinds.includes('admin_key');
}

const decodedOnce = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/**
 * Header pairs without the proxy's admin credentials, so they never reach the target (nor the journal):
 * `X-Admin-Key`, and any header whose name or value carries the admin key in any encoding
 * (`Authorization: Basic base64(user:KEY)`, a cookie, a header named after it).
 */
export function withoutAdminKey(raw: readonly string[], carries: CarriesAdminKey): readonly string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    if (name.toLowerCase() === 'x-admin-key' || carries(value) || carries(name)) continue;
    out.push(name, value);
  }
  return out;
}
