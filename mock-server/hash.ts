/** FNV-1a, 32 bit, over any mix of strings and numbers: stable seeds and short non-secret fingerprints. */
export function fnv1a32(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    const text = `${part}\u0000`;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
  }
  return hash >>> 0;
}

/** A short fingerprint, e.g. `tok_1a2b3c4d`: equal inputs give equal fingerprints; the input cannot be recovered. */
export const fingerprint = (prefix: string, ...parts: readonly (string | number)[]) =>
  `${prefix}_${fnv1a32(...parts)
    .toString(16)
    .padStart(8, '0')}`;

/** FNV-1a, 32 bit, over bytes (a request body as received: no decoding, no re-serialising). */
function fnv1a32Bytes(seed: string, bytes: Uint8Array): number {
  let hash = fnv1a32(seed);
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i] as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The journal's fingerprint of a request: operation and exact body bytes (cheap, not collision-resistant; the idempotency store uses SHA-256). */
export const journalFingerprint = (operation: string, body?: Uint8Array) =>
  `req_${(body ? fnv1a32Bytes(operation, body) : fnv1a32(operation)).toString(16).padStart(8, '0')}`;
