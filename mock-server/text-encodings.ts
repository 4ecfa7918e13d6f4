/** rot13 of the ASCII letters, every other character kept (the same length). */
export const rot13 = (text: string) =>
  text.replace(/[A-Za-z]/g, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });

/** RFC 4648 base32 of the text's UTF-8 bytes, upper case, without padding. */
export function base32(text: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of Buffer.from(text)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(value >>> bits) & 31];
    }
  }
  return bits > 0 ? out + alphabet[(value << (5 - bits)) & 31] : out;
}

/** The text bytes decode to, when they are text: at least 6 bytes, 90% or more of them printable ASCII. */
export function asText(bytes: Buffer): string | undefined {
  if (bytes.length < 6) return undefined;
  let printable = 0;
  for (const byte of bytes)
    if ((byte >= 0x20 && byte < 0x7f) || byte === 9 || byte === 10 || byte === 13) printable++;
  return printable >= 0.9 * bytes.length ? bytes.toString('utf8') : undefined;
}
