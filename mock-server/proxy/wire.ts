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

/**
 * Header pairs without the proxy's admin credentials, so they never reach the target (nor the journal):
 * `X-Admin-Key`, and any header whose value carries the admin key (`Authorization: Bearer KEY`, a cookie),
 * as sent or percent-encoded. Without an admin key, the pairs are returned as they are.
 */
export function withoutAdminKey(raw: readonly string[], adminKey: string | undefined): readonly string[] {
  if (!adminKey) return raw;
  const carries = (value: string) => carriesAdminKey(value, adminKey);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    if (name.toLowerCase() === 'x-admin-key' || carries(value)) continue;
    out.push(name, value);
  }
  return out;
}

/** Whether a text (a header value, a URL) carries the admin key, as sent or percent-encoded. */
export function carriesAdminKey(text: string, adminKey: string): boolean {
  if (text.includes(adminKey)) return true;
  if (!text.includes('%')) return false;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' ')).includes(adminKey);
  } catch {
    return false;
  }
}
