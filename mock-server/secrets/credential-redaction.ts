// One file on purpose: its passes (JSON, multipart, pairs, an encoded text) read the texts quoted in each other
// through redactCredentials, so split they would import each other in a circle; each pass is its own unit.
import { type IsCredentialName, speaksOfCredential } from './credential-names.ts';

/*
 * Credentials by where they sit, whatever they look like (the secret scan finds them by shape): the value
 * under a credential's name in a header, a JSON document (at any depth, in arrays too, and in a document cut
 * short), a query string or form body (`api_key=...&password=...`), a multipart part, a cookie; a URL's
 * password (`https://user:pass@host`); a command line's `-u user:PASS`; and the credential after an HTTP
 * authentication scheme (`Bearer ...`) anywhere in a text. Each is replaced by `[REDACTED]`, the name and the
 * scheme kept.
 *
 * A text quoted in another is read too, to a bounded depth (`MAX_NESTING`): JSON inside a JSON string (an
 * answer echoing the request's body, as validation errors do), JSON inside prose or a log line, a multipart
 * body inside either, and a value percent-encoded more than once. The journal, its NDJSON and HAR exports,
 * the findings, the client report and `scenario from-har` all keep texts through `redactCredentials`.
 */

/** How many texts deep a quoted or encoded text is read (JSON in a JSON string in a form value ...). */
export const MAX_NESTING = 4;

export const REDACTED = '[REDACTED]';

// The schemes of HTTP authentication and of common API tokens; what follows one is its credential.
const SCHEMES =
  '(?:Basic|Bearer|Digest|Token|Negotiate|NTLM|OAuth|ApiKey|AWS4-HMAC-SHA256|Splunk|GoogleLogin)';
// A scheme alone (`Authorization: Bearer abc`): the credential after it is the scheme rule's.
const SCHEME_ONLY = new RegExp(`^${SCHEMES}$`, 'i');
const SCHEME_VALUE = new RegExp(`^(\\s*${SCHEMES})\\s+\\S[\\s\\S]*$`, 'i');
// Any case (`bearer abc123` too); `looksGenerated` tells a credential from a word after it.
const SCHEME_IN_TEXT = new RegExp(`\\b(${SCHEMES})([ \\t]+|\\+|%20)([A-Za-z0-9._~+/=:%-]{6,})`, 'gi');
// A URL's userinfo password: `scheme://user:PASSWORD@`.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@?#]*:)([^@\s/?#]+)@/gi;
// A command line's user and password (`curl -u user:PASS`, `--user=user:PASS`, `--proxy-user`): the user kept.
const USER_OPTION =
  /((?:^|[\s"'`])(?:-[uU][ \t]*|--(?:proxy-)?user(?:[ \t]+|=)))(["']?)([^\s:"']*):([^\s"']+)/g;
// `name=value` in a query string, a form body, a cookie or prose; the name may be percent-encoded.
const NAME_CHAR = /[A-Za-z0-9_.\-[\]%+]/;
const VALUE_END = /[&;\s#"',<>]/;
// `"name": "value"` (or single quotes) outside a JSON document: JavaScript in a page, a JSON string's JSON.
const QUOTED_PAIR = /(["'])([A-Za-z0-9_.\- ]{1,128})\1(\s*:\s*)(["'])((?:\\[\s\S]|(?!\4)[^\\])*)(\4|$)/g;
// `name: value` in plain text, YAML or a header dump (`password: hunter2`, `X-Auth-Token: abc`), one line.
const COLON_PAIR = /(^|[\s{,;])([A-Za-z][A-Za-z0-9_.-]{0,63})([ \t]*:[ \t]+)([^\s,;}"'[\]]+)/g;
// The same in JSON held as a JSON string (`"body": "{\"password\": \"...\"}"`): quotes escaped.
const ESCAPED_PAIR = /(\\")([A-Za-z0-9_.\- ]{1,128})\\"(\s*:\s*)(\\")((?:(?!\\")[\s\S])*)(\\"|$)/g;

/**
 * Whether what follows a scheme in prose is a credential rather than a word (`Token expired`, `Basic
 * information`): it holds a digit, ends in base64 padding, or has a capital letter past its first.
 */
const looksGenerated = (value: string) =>
  /\d|=$/.test(value) || (value.length >= 8 && /[a-z]/.test(value) && /[A-Z]/.test(value.slice(1)));

/** A percent-encoded name read as meant, decoded while that changes it (`api%255Fkey` is `api_key`). */
const decodeName = (name: string) => {
  let decoded = name;
  for (let round = 0; round < MAX_NESTING && decoded.includes('%'); round++) {
    const next = decodeOnce(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  return decoded === name ? decodeOnce(name) : decoded;
};

const decodeOnce = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/**
 * Each `name=value` whose name speaks of a credential, its value redacted: found from each `=` (a pass over
 * the text, looking back over at most 128 name characters), so a long text costs one scan.
 */
function redactPairs(text: string, isCredential: IsCredentialName, depth = 0): string {
  let out = '';
  let copied = 0;
  for (let at = text.indexOf('='); at !== -1; at = text.indexOf('=', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 128 && NAME_CHAR.test(text[start - 1] as string)) start--;
    if (start === at || start < copied) continue;
    let end = at + 1;
    while (end < text.length && !VALUE_END.test(text[end] as string)) end++;
    const value = text.slice(at + 1, end);
    if (value === '' || value === REDACTED) continue;
    let replaced: string | undefined;
    if (isCredential(decodeName(text.slice(start, at)))) replaced = REDACTED;
    else if (depth < MAX_NESTING && value.includes('%')) replaced = redactEncoded(value, isCredential, depth);
    if (replaced === undefined) continue;
    out += `${text.slice(copied, at + 1)}${replaced}`;
    copied = end;
    at = end - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A percent-encoded value (a form field holding JSON, a `redirect=` URL with its own `?access_token=`, the
 * same encoded twice) read decoded: when that holds a credential, the value redacted and encoded again; else
 * undefined.
 */
function redactEncoded(value: string, isCredential: IsCredentialName, depth: number): string | undefined {
  const decoded = decodeOnce(value);
  if (decoded === value) return undefined;
  const redacted = redactCredentials(decoded, isCredential, depth + 1);
  return redacted === decoded ? undefined : encodeURIComponent(redacted);
}

// An escape of what structures a text (`=`, `"`, `{`, `:`, `%` itself): a whole text encoded, perhaps twice.
const ENCODED_STRUCTURE = /%(?:3[dDaA]|22|7[bB]|25)/;

/** A credential header's value redacted: the scheme kept (`Bearer [REDACTED]`), each cookie's name kept. */
export function redactCredentialHeader(lowerName: string, value: string): string {
  if (lowerName === 'cookie') return value.replace(/([^=;\s]+)=([^;]*)/g, `$1=${REDACTED}`);
  if (lowerName === 'set-cookie') return value.replace(/^([^=;]*)=([^;]*)/, `$1=${REDACTED}`);
  const scheme = SCHEME_VALUE.exec(value);
  return scheme ? `${(scheme[1] as string).trim()} ${REDACTED}` : REDACTED;
}

/**
 * Credentials in any text, by where they sit: `name=value` pairs, quoted `"name": "value"` pairs, a URL's
 * password and what follows an authentication scheme. A value cut short at the text's end is redacted to the
 * end.
 */
export function redactCredentialText(
  text: string,
  isCredential: IsCredentialName = speaksOfCredential,
  /** The text was read as JSON already (its quoted pairs are done). */
  json = false,
  depth = 0,
): string {
  let out = text;
  if (out.includes('=')) out = redactPairs(out, isCredential, depth);
  if (out.includes(':')) {
    // `"name": "value"` as it is, or escaped in a JSON string: the name kept, the value redacted.
    const quoted = (
      whole: string,
      q: string,
      name: string,
      colon: string,
      vq: string,
      value: string,
      end: string,
    ) =>
      value !== '' && value !== REDACTED && isCredential(name)
        ? `${q}${name}${q}${colon}${vq}${REDACTED}${end}`
        : whole;
    if (!json) out = out.replace(QUOTED_PAIR, quoted);
    if (out.includes('\\"')) out = out.replace(ESCAPED_PAIR, quoted);
    out = out.replace(COLON_PAIR, (whole, before: string, name: string, colon: string, value: string) =>
      value !== REDACTED && !SCHEME_ONLY.test(value) && isCredential(name)
        ? `${before}${name}${colon}${REDACTED}`
        : whole,
    );
    out = out.replace(URL_PASSWORD, `$1${REDACTED}@`);
  }
  if (out.includes('-')) out = out.replace(USER_OPTION, `$1$2$3:${REDACTED}`);
  return out.replace(SCHEME_IN_TEXT, (whole, scheme: string, space: string, value: string) =>
    looksGenerated(value) ? `${scheme}${space}${REDACTED}` : whole,
  );
}

/** Whether a text reads as a JSON document (or NDJSON): its first character opens an object or an array. */
export const looksLikeJson = (text: string) => /^\s*[[{]/.test(text);

interface Frame {
  object: boolean;
  /** Everything in this container is a credential (it is the value of a credential's name). */
  credential: boolean;
  key?: string;
  expectKey: boolean;
}

const jsonName = (raw: string) => {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
};

/*
 * A JSON string whose text holds what the pass over the whole document cannot see through the string's
 * escapes: JSON (`{\"password\":123}`), lines (`\n`: a `name: value` after a line break, a multipart
 * body), or quotes: read decoded. Pairs, URLs and schemes in a string are seen by that pass already.
 */
const HOLDS_TEXT = /[{[]|\\[nr"]/;

/**
 * A JSON string's content (as written, escapes and all) with the credentials of the text it holds redacted
 * (`"{\"password\":123}"`: JSON echoed in a string), written back as a JSON string's content; undefined
 * when nothing in it changes.
 */
function redactQuotedText(raw: string, isCredential: IsCredentialName, depth: number): string | undefined {
  if (depth >= MAX_NESTING || !HOLDS_TEXT.test(raw)) return undefined;
  let decoded: string;
  try {
    decoded = JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined; // cut short at the capture limit: the escaped pairs of the text rule still apply
  }
  const redacted = redactCredentials(decoded, isCredential, depth + 1);
  return redacted === decoded ? undefined : JSON.stringify(redacted).slice(1, -1);
}

/**
 * One pass over JSON tokens that redacts as it reads: the containers it is in (to know whose value a token
 * is) and the text it has copied so far. Each kind of token is one method, which returns where the token ends.
 */
class JsonRedaction {
  private readonly stack: Frame[] = [];
  private out = '';
  private copied: number;

  constructor(
    private readonly text: string,
    from: number,
    private readonly isCredential: IsCredentialName,
    private readonly depth: number,
  ) {
    this.copied = from;
  }

  /** Whether the value read now sits under a credential's name, or in a container that does. */
  private inCredential(): boolean {
    const top = this.stack.at(-1);
    if (!top) return false;
    return top.credential || (top.object && top.key !== undefined && this.isCredential(top.key));
  }

  /** The text from `start` to `end` written as `by`, what lies before it copied as it is. */
  private replace(start: number, end: number, by: string): void {
    this.out += this.text.slice(this.copied, start) + by;
    this.copied = end;
  }

  /**
   * The string opening at `at`: an object's name (remembered), a credential's value (redacted, to the end
   * of the text when left open), or another value, read for the text it holds (`redactQuotedText`).
   */
  string(at: number): number {
    const { text } = this;
    let j = at + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const end = Math.min(j, text.length);
    const top = this.stack.at(-1);
    const raw = text.slice(at + 1, end);
    if (top?.object && top.expectKey) {
      top.key = jsonName(raw);
      top.expectKey = false;
    } else if (this.inCredential()) {
      if (raw !== REDACTED) this.replace(at + 1, end, REDACTED);
    } else {
      const inner = redactQuotedText(raw, this.isCredential, this.depth);
      if (inner !== undefined) this.replace(at + 1, end, inner);
    }
    return j + 1;
  }

  /** An object or an array opening: everything in it is a credential when it is a credential's value. */
  open(object: boolean): void {
    this.stack.push({ object, credential: this.inCredential(), expectKey: object });
  }

  /** A container closing; returns how many are still open. */
  close(): number {
    this.stack.pop();
    return this.stack.length;
  }

  /** A comma: in an object, a name comes next. */
  comma(): void {
    const top = this.stack.at(-1);
    if (top?.object) {
      top.expectKey = true;
      top.key = undefined;
    }
  }

  /** The number starting at `at`: a credential's value is redacted (as a string). */
  number(at: number): number {
    const { text } = this;
    let j = at + 1;
    while (j < text.length && /[-+0-9.eE]/.test(text[j] as string)) j++;
    if (this.inCredential()) this.replace(at, j, `"${REDACTED}"`);
    return j;
  }

  /** The text read up to `end`, redacted. */
  result(end: number): string {
    return this.out + this.text.slice(this.copied, end);
  }
}

/**
 * The strings and numbers under a credential's name in the JSON starting at `from`, at any depth; every
 * other string read for a text it holds (`redactQuotedText`). Reads the text as a stream of tokens, so a
 * document cut short (at the capture limit) or not quite JSON is redacted as far as it goes: a credential
 * string left open at the end is redacted to the end. With `embedded`, it stops where the value that starts
 * at `from` closes (JSON inside prose); else it reads to the end (a document, or NDJSON).
 */
function redactJsonFrom(
  text: string,
  from: number,
  isCredential: IsCredentialName,
  depth: number,
  embedded: boolean,
): { out: string; end: number } {
  const pass = new JsonRedaction(text, from, isCredential, depth);
  let i = from;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') i = pass.string(i);
    else if (c === '{' || c === '[') {
      pass.open(c === '{');
      i++;
    } else if (c === '}' || c === ']') {
      i++;
      if (pass.close() === 0 && embedded) break;
    } else if (c === ',') {
      pass.comma();
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) i = pass.number(i);
    else i++;
  }
  const end = Math.min(i, text.length);
  return { out: pass.result(end), end };
}

/**
 * The strings and numbers of a JSON document under a credential's name redacted, at any depth (an array of
 * bearer tokens under `tokens`, an object under `credentials`), and the texts its strings hold (JSON echoed
 * in a string, a multipart body, a form). A document cut short is redacted as far as it goes.
 */
export function redactJsonCredentials(
  text: string,
  isCredential: IsCredentialName = speaksOfCredential,
  depth = 0,
): string {
  return redactJsonFrom(text, 0, isCredential, depth, false).out;
}

// Where JSON may start inside prose: an object with a quoted name, or an array of strings, objects or arrays.
const JSON_START = /[{[]\s*["{[]/g;

/** JSON inside a text that is not a JSON document (`Invalid body: {"password": 123}`), each value redacted. */
function redactEmbeddedJson(text: string, isCredential: IsCredentialName, depth: number): string {
  if (!text.includes('"')) return text;
  let out = '';
  let copied = 0;
  JSON_START.lastIndex = 0;
  for (let match = JSON_START.exec(text); match !== null; match = JSON_START.exec(text)) {
    const { out: redacted, end } = redactJsonFrom(text, match.index, isCredential, depth, true);
    out += text.slice(copied, match.index) + redacted;
    copied = end;
    JSON_START.lastIndex = Math.max(end, match.index + 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

// A multipart part's headers (its Content-Disposition naming it, any other header lines), then a blank line.
const PART_HEADERS =
  /Content-Disposition:[^\r\n]*?;[ \t]*name\*?=(?:"((?:\\.|[^"\\\r\n])*)"|([^;\s]+))[^\r\n]*(?:\r?\n[^\r\n]+)*?\r?\n\r?\n/gi;
// Where a part's content ends: a line starting with the boundary's `--`.
const PART_END = /\r?\n--/g;

/**
 * The parts of a multipart body (`multipart/form-data`) named as a credential, their content redacted;
 * a JSON part's fields as in a JSON body. Parts are found by their headers, wherever they are (after a
 * preamble, with bare line feeds, quoted inside another text), the boundary not needed; a part cut short at
 * the end is redacted to the end.
 */
export function redactMultipart(
  text: string,
  isCredential: IsCredentialName = speaksOfCredential,
  depth = 0,
): string {
  let out = '';
  let copied = 0;
  PART_HEADERS.lastIndex = 0;
  for (let match = PART_HEADERS.exec(text); match !== null; match = PART_HEADERS.exec(text)) {
    const start = match.index + match[0].length;
    PART_END.lastIndex = start;
    const next = PART_END.exec(text);
    const end = next ? next.index : text.length;
    const named = match[1] ?? match[2] ?? '';
    const body = text.slice(start, end);
    let redacted = body;
    if (isCredential(named)) redacted = body === '' ? body : REDACTED;
    else if (looksLikeJson(body)) redacted = redactJsonCredentials(body, isCredential, depth + 1);
    if (redacted !== body) {
      out += text.slice(copied, start) + redacted;
      copied = end;
    }
    PART_HEADERS.lastIndex = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Every credential by where it sits in a body or a value: multipart parts, JSON fields (the text a JSON
 * document, or JSON inside it), then the pairs, URL passwords, `-u` options and schemes of any text; and
 * a text percent-encoded whole (`https%253A%252F%252F...%253Faccess_token%253D...`) read decoded.
 */
export function redactCredentials(
  text: string,
  isCredential: IsCredentialName = speaksOfCredential,
  depth = 0,
): string {
  let out = text;
  if (/content-disposition:/i.test(out)) out = redactMultipart(out, isCredential, depth);
  const json = looksLikeJson(out);
  out = json ? redactJsonCredentials(out, isCredential, depth) : redactEmbeddedJson(out, isCredential, depth);
  out = redactCredentialText(out, isCredential, json, depth);
  if (depth > 0 && depth < MAX_NESTING && ENCODED_STRUCTURE.test(out)) {
    const decoded = decodeOnce(out);
    if (decoded !== out) {
      const redacted = redactCredentials(decoded, isCredential, depth + 1);
      if (redacted !== decoded) return encodeURIComponent(redacted);
    }
  }
  return out;
}
