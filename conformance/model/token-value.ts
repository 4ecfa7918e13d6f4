/**
 * A token as a check describes it, materialised only when sent: either a literal (a generated bad token,
 * not a secret) or derived from a real token (the valid or the denied one), possibly altered. Derived
 * tokens are never printed: reproductions use shell expressions such as "${TOKEN:0:12}x${TOKEN:13}".
 */
export type TokenTransform =
  | { op: 'none' }
  /**
   * Change one character: at `at` (0 the first, under 1 a position before the last significant one, 1 the
   * last significant one: trailing `=` padding is not significant). `char` only supplies the random part of
   * the new character: the change always alters a bit the token's encoding uses (see `changedChar`).
   */
  | { op: 'replace'; at: number; char: string }
  /** Keep the first `keep` (0..1 of the length, at least one character). */
  | { op: 'truncate'; keep: number }
  | { op: 'append'; suffix: string };

export type TokenValue =
  | { kind: 'literal'; value: string }
  | { kind: 'derived'; from: 'valid' | 'denied' | 'expired' | 'revoked'; transform: TokenTransform };

/** A transform resolved against the real token: absolute positions, for the curl expression. */
export type ResolvedTransform =
  | { op: 'none' }
  | { op: 'replace'; index: number; char: string }
  | { op: 'truncate'; length: number }
  | { op: 'append'; suffix: string };

/** The base64url alphabet, the characters of most tokens. */
export const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The standard base64 alphabet (RFC 4648 section 4). */
export const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Hex tokens (and UUIDs): every bit of every digit is used, and many gateways compare them case-insensitively. */
const HEX_TOKEN = /^[0-9a-fA-F-]+$/;

/** The index of the last character that carries data: trailing `=` is base64 padding. */
export function lastSignificantIndex(token: string): number {
  let last = token.length - 1;
  while (last > 0 && token[last] === '=') last--;
  return last;
}

/**
 * The character to put at `index` instead of the one there: always different case-insensitively, and
 * always a change a decoder cannot ignore. In base64 the last character of a segment carries unused low
 * bits (a lenient decoder, such as jose's, accepts a change there), so the top bit of the character's
 * 6-bit value is flipped (A<->g, ...), which every position uses; in a hex token the top bit of the digit
 * (0<->8, ...), keeping the token hex. `random` (a base64url character) supplies the other bits.
 */
export function changedChar(token: string, index: number, random: string): string {
  const original = token[index] ?? '';
  const r = Math.max(0, BASE64URL_ALPHABET.indexOf(random));
  if (HEX_TOKEN.test(token)) {
    const value = Number.parseInt(original, 16);
    if (Number.isNaN(value)) return (r % 16).toString(16);
    const digit = (value ^ 8 ^ (r & 7)).toString(16);
    return /[A-F]/.test(token) && !/[a-f]/.test(token) ? digit.toUpperCase() : digit;
  }
  const alphabet = /[+/]/.test(token) && !/[-_]/.test(token) ? BASE64_ALPHABET : BASE64URL_ALPHABET;
  const value = alphabet.indexOf(original);
  const half = value === -1 ? r & 32 : (value & 32) ^ 32;
  let next = half | (r & 31);
  // At most one character of the other half is the same letter in the other case: skip it.
  while ((alphabet[next] as string).toLowerCase() === original.toLowerCase()) next = half | ((next + 1) & 31);
  return alphabet[next] as string;
}

/**
 * Applies a transform. A replacement always changes the character case-insensitively too, so a gateway
 * whose tokens are case-insensitive (hex) is not blamed, and always in a bit the encoding uses, so a
 * gateway that compares decoded bytes (lenient base64) is not blamed either (see `changedChar`).
 */
export function applyTransform(
  token: string,
  transform: TokenTransform,
): { value: string; resolved: ResolvedTransform } {
  switch (transform.op) {
    case 'none':
      return { value: token, resolved: transform };
    case 'append':
      return { value: token + transform.suffix, resolved: transform };
    case 'truncate': {
      const length = Math.max(1, Math.min(token.length - 1, Math.floor(transform.keep * token.length)));
      return { value: token.slice(0, length), resolved: { op: 'truncate', length } };
    }
    case 'replace': {
      const last = lastSignificantIndex(token);
      const index =
        transform.at >= 1
          ? last
          : Math.min(Math.max(0, last - 1), Math.floor(Math.max(0, transform.at) * last));
      const char = changedChar(token, index, transform.char);
      return {
        value: token.slice(0, index) + char + token.slice(index + 1),
        resolved: { op: 'replace', index, char },
      };
    }
  }
}

/** A shell word that reproduces a derived token from the variable holding the real one. */
export function shellExpression(variable: string, transform: ResolvedTransform): string {
  const name = variable.replace(/^\$/, '');
  switch (transform.op) {
    case 'none':
      return `"$${name}"`;
    case 'truncate':
      return `"\${${name}:0:${transform.length}}"`;
    case 'append':
      return `"$${name}"${shellQuote(transform.suffix)}`;
    case 'replace':
      return `"\${${name}:0:${transform.index}}"${shellQuote(transform.char)}"\${${name}:${transform.index + 1}}"`;
  }
}

/** Quotes text for a POSIX shell; bytes outside printable ASCII use bash's $'\\xNN' form. */
export function shellQuote(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  const bytes = Buffer.from(text, 'latin1');
  let out = "$'";
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    if (byte >= 0x20 && byte < 0x7f && char !== "'" && char !== '\\') out += char;
    else out += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `${out}'`;
}
