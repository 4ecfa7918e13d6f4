import { lowerAscii } from '../text-encodings.ts';

/* The readings of a text that are scanned (as sent, lower-cased, percent-decoded, `+` as a space), each mapped
 * back to the characters of the text as sent. */

/**
 * ASCII letters in lower case, every other character kept: the same length, so offsets need no mapping.
 * Known secrets are looked for in lower case in a lower-cased reading: DNS lower-cases host names, so a
 * secret sent out through a host label arrives that way, and an agent may upper-case what it leaks.
 */
export const lower = lowerAscii;

/** A reading of `view` with each character mapped to one character (lower case, rot13): offsets unchanged. */
export const sameLength = (view: View, map: (text: string) => string): View => ({
  text: map(view.text),
  source: view,
  escapes: [],
});

/** An escape sequence decoded into `units` characters at `at`, from `length` characters at `from` of the source. */
interface Escape {
  at: number;
  units: number;
  from: number;
  length: number;
}

/** The text as a client or server may read it; `source` and `escapes` say where its characters came from. */
export interface View {
  text: string;
  source?: View;
  escapes?: Escape[];
}

/** The offset in the text as sent of the first character that produced `view.text[index]` (or of its end). */
export function originOf(view: View, index: number): number {
  let current = view;
  let offset = index;
  while (current.source && current.escapes) {
    let mapped = offset;
    for (const e of current.escapes) {
      if (e.at > offset) break;
      mapped = offset < e.at + e.units ? e.from : e.from + e.length + (offset - e.at - e.units);
    }
    offset = mapped;
    current = current.source;
  }
  return offset;
}

const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
// UTF-8 sequence length from its first byte (a stray continuation byte counts as one and fails to decode).
const utf8Length = (lead: number) => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1);

/**
 * Decodes percent-escapes one character (one UTF-8 sequence) at a time with decodeURIComponent, so a stray
 * `%` (`100% sure`) or an invalid sequence is kept as it is and does not stop the rest from being decoded
 * (decodeURIComponent on the whole text would throw). Returns undefined when nothing decodes.
 */
function percentDecode(view: View): View | undefined {
  const { text } = view;
  const escapes: Escape[] = [];
  let decodedText = '';
  let copied = 0;
  for (let i = text.indexOf('%'); i !== -1; i = text.indexOf('%', i)) {
    const hex = text.slice(i + 1, i + 3);
    if (HEX_PAIR.test(hex)) {
      const escaped = text.slice(i, i + 3 * utf8Length(Number.parseInt(hex, 16)));
      let decoded: string | undefined;
      try {
        decoded = decodeURIComponent(escaped);
      } catch {
        decoded = undefined; // malformed or cut short: the `%` stays as text
      }
      if (decoded !== undefined) {
        decodedText += text.slice(copied, i);
        escapes.push({ at: decodedText.length, units: decoded.length, from: i, length: escaped.length });
        decodedText += decoded;
        i += escaped.length;
        copied = i;
        continue;
      }
    }
    i++;
  }
  if (escapes.length === 0) return undefined;
  return { text: decodedText + text.slice(copied), source: view, escapes };
}

const ESCAPE = /%[0-9A-Fa-f]{2}/;
// Percent-decoding rounds per reading: a secret encoded more times than this is not looked for.
const MAX_DECODES = 4;

/**
 * The readings of the text that are scanned: as sent; percent-decoded, and again while that changes it
 * (double encoding); and, when a known secret holds a space and the text a `+`, the same with `+` read as a
 * space first (form-encoded query strings; a URL path or a search query keeps `+` literal, so both readings
 * are scanned). Well-known shapes need no such reading: only the private key header holds spaces, and its
 * pattern takes `+` for one. Text without an escape or such a `+` has one reading.
 */
export function readings(text: string, spaced: boolean): View[] {
  const views: View[] = [{ text }];
  const plus = spaced && text.includes('+');
  if (!plus && !ESCAPE.test(text)) return views;
  const decodeFrom = (start: View) => {
    let view: View | undefined = start;
    for (let round = 0; round < MAX_DECODES; round++) {
      view = percentDecode(view);
      if (!view) return;
      views.push(view);
    }
  };
  decodeFrom(views[0] as View);
  if (plus) {
    // Same length as the text: offsets need no mapping.
    const spacedView = { text: text.replaceAll('+', ' ') };
    views.push(spacedView);
    decodeFrom(spacedView);
  }
  return views;
}
