/**
 * A token as a check describes it, materialised only when sent: either a literal (a generated bad token,
 * not a secret) or derived from a real token (the valid or the denied one), possibly altered. Derived
 * tokens are never printed: reproductions use shell expressions such as "${TOKEN:0:12}x${TOKEN:13}".
 */
export type TokenTransform =
  | { op: 'none' }
  /** Replace the character at `at` (0..1 of the length, never the last one) with `char`. */
  | { op: 'replace'; at: number; char: string }
  /** Keep the first `keep` (0..1 of the length, at least one character). */
  | { op: 'truncate'; keep: number }
  | { op: 'append'; suffix: string };

export type TokenValue =
  | { kind: 'literal'; value: string }
  | { kind: 'derived'; from: 'valid' | 'denied'; transform: TokenTransform };

/** A transform resolved against the real token: absolute positions, for the curl expression. */
export type ResolvedTransform =
  | { op: 'none' }
  | { op: 'replace'; index: number; char: string }
  | { op: 'truncate'; length: number }
  | { op: 'append'; suffix: string };

/** The base64url alphabet, the characters of most tokens. */
export const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Applies a transform. A replacement always changes the character case-insensitively too, so a gateway
 * whose tokens are case-insensitive (hex) is not blamed; the last character is never replaced, because
 * in base64 it can carry unused bits that decode to the same bytes.
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
      const index = Math.min(token.length - 2, Math.max(0, Math.floor(transform.at * (token.length - 1))));
      const original = token[index] ?? '';
      let char = transform.char;
      for (let i = BASE64URL_ALPHABET.indexOf(char); char.toLowerCase() === original.toLowerCase(); i++) {
        char = BASE64URL_ALPHABET[(i + 1) % BASE64URL_ALPHABET.length] as string;
      }
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
