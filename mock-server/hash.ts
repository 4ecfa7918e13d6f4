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
