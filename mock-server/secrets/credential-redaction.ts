import { type IsCredentialName, speaksOfCredential } from './credential-names.ts';

/*
 * Credentials by where they sit, whatever they look like (the secret scan finds them by shape): the value
 * under a credential's name in a header, a JSON document (at any depth, in arrays too, and in a document cut
 * short), a query string or form body (`api_key=...&password=...`), a multipart part, a cookie; a URL's
 * password (`https://user:pass@host`); and the credential after an HTTP authentication scheme
 * (`Bearer ...`) anywhere in a text. Each is replaced by `[REDACTED]`, the name and the scheme kept.
 */

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

const decodeName = (name: string) => {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
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
    else if (depth < 2 && value.includes('%')) replaced = redactEncoded(value, isCredential, depth);
    if (replaced === undefined) continue;
    out += `${text.slice(copied, at + 1)}${replaced}`;
    copied = end;
    at = end - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A percent-encoded value (a form field holding JSON, a `redirect=` URL with its own `?access_token=`) read
 * decoded: when that holds a credential by place, the value redacted and encoded again; else undefined.
 */
function redactEncoded(value: string, isCredential: IsCredentialName, depth: number): string | undefined {
  const decoded = decodeName(value);
  if (decoded === value) return undefined;
  let redacted = decoded.includes('=') ? redactPairs(decoded, isCredential, depth + 1) : decoded;
  if (looksLikeJson(redacted)) redacted = redactJsonCredentials(redacted, isCredential);
  if (redacted.includes(':'))
    redacted = redactCredentialText(redacted, isCredential, looksLikeJson(redacted));
  return redacted === decoded ? undefined : encodeURIComponent(redacted);
}

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
): string {
  let out = text;
  if (out.includes('=')) out = redactPairs(out, isCredential);
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

/**
 * The strings and numbers of a JSON document under a credential's name redacted, at any depth (an array of
 * bearer tokens under `tokens`, an object under `credentials`). Reads the text as a stream of tokens, so a
 * document cut short (at the capture limit) or not quite JSON is redacted as far as it goes: a credential
 * string left open at the end is redacted to the end.
 */
export function redactJsonCredentials(
  text: string,
  isCredential: IsCredentialName = speaksOfCredential,
): string {
  const stack: Frame[] = [];
  let out = '';
  let copied = 0;
  const inCredential = () => {
    const top = stack.at(-1);
    if (!top) return false;
    return top.credential || (top.object && top.key !== undefined && isCredential(top.key));
  };
  const replace = (start: number, end: number, quoted: boolean) => {
    out += text.slice(copied, start) + (quoted ? REDACTED : `"${REDACTED}"`);
    copied = end;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const end = Math.min(j, text.length);
      const top = stack.at(-1);
      if (top?.object && top.expectKey) {
        top.key = jsonName(text.slice(i + 1, end));
        top.expectKey = false;
      } else if (inCredential() && text.slice(i + 1, end) !== REDACTED) replace(i + 1, end, true);
      i = j + 1;
    } else if (c === '{' || c === '[') {
      stack.push({ object: c === '{', credential: inCredential(), expectKey: c === '{' });
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.object) {
        top.expectKey = true;
        top.key = undefined;
      }
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[-+0-9.eE]/.test(text[j] as string)) j++;
      if (inCredential()) replace(i, j, false);
      i = j;
    } else i++;
  }
  return out + text.slice(copied);
}

/**
 * The parts of a multipart body (`multipart/form-data`) named as a credential, their content redacted. The
 * boundary is the body's first line; a part cut short at the end is redacted to the end.
 */
export function redactMultipart(text: string, isCredential: IsCredentialName = speaksOfCredential): string {
  const first = /^--([^\r\n]{1,200})\r?\n/.exec(text);
  if (!first) return text;
  const delimiter = `--${first[1]}`;
  const parts = text.split(delimiter);
  for (let p = 1; p < parts.length; p++) {
    const part = parts[p] as string;
    const blank = /\r?\n\r?\n/.exec(part);
    if (!blank) continue;
    const headers = part.slice(0, blank.index);
    const name = /;\s*name\*?=(?:"((?:\\.|[^"\\])*)"|([^;\s]+))/i.exec(headers);
    const named = name?.[1] ?? name?.[2];
    const body = part.slice(blank.index + blank[0].length);
    if (named === undefined || !isCredential(named)) {
      // A JSON part (a file, a `payload_json` field): its fields as in a JSON body.
      if (looksLikeJson(body)) parts[p] = `${headers}${blank[0]}${redactJsonCredentials(body, isCredential)}`;
      continue;
    }
    const trailing = /\r?\n$/.exec(body)?.[0] ?? '';
    if (body.length > trailing.length)
      parts[p] = `${headers}${blank[0]}${REDACTED}${p < parts.length - 1 ? trailing : ''}`;
  }
  return parts.join(delimiter);
}

/**
 * Every credential by where it sits in a body or a value: multipart parts, JSON fields (when the text reads
 * as JSON), then the pairs, URL passwords and schemes of any text.
 */
export function redactCredentials(text: string, isCredential: IsCredentialName = speaksOfCredential): string {
  let out = text;
  if (out.startsWith('--')) out = redactMultipart(out, isCredential);
  const json = looksLikeJson(out);
  if (json) out = redactJsonCredentials(out, isCredential);
  return redactCredentialText(out, isCredential, json);
}
