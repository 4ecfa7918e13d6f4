/** Each ASCII character's code once mapped (the same length); other characters kept. */
function mapAscii(text: string, table: Uint16Array): string {
  const out = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[i] = code < 128 ? (table[code] as number) : code;
  }
  // In slices: fromCharCode takes its arguments on the stack. Every code unit kept as it is (lone surrogates too).
  let mapped = '';
  for (let at = 0; at < out.length; at += 8192)
    mapped += String.fromCharCode.apply(null, out.subarray(at, at + 8192) as unknown as number[]);
  return mapped;
}

const asciiTable = (map: (code: number) => number) =>
  Uint16Array.from({ length: 128 }, (_, code) => map(code));
const ROT13 = asciiTable((code) => {
  const base = code >= 65 && code <= 90 ? 65 : code >= 97 && code <= 122 ? 97 : -1;
  return base < 0 ? code : ((code - base + 13) % 26) + base;
});
const LOWER = asciiTable((code) => (code >= 65 && code <= 90 ? code + 32 : code));

/** rot13 of the ASCII letters, every other character kept (the same length). */
export const rot13 = (text: string) => mapAscii(text, ROT13);

/**
 * ASCII letters in lower case, every other character kept: the same length (unlike `toLowerCase`, which
 * maps some other characters to longer ones), at the native speed of `toLowerCase` on ASCII text.
 */
export const lowerAscii = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for any character outside ASCII
  /[^\x00-\x7f]/.test(text) ? mapAscii(text, LOWER) : text.toLowerCase();

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
