/*
 * What a tool call means, as opposed to its bytes. A client that retries a failing call rarely sends the same
 * bytes: libraries add an attempt counter or a cache-buster field, and an LLM agent rewords the query in case,
 * spacing or punctuation. The client report recognises a retry by what it asks for, so the body stage
 * records a key of the parsed body in this form beside the byte fingerprint.
 */

// Punctuation and whitespace (any script): they do not change what a search asks for.
const PUNCTUATION_AND_SPACE = /[\p{P}\s]+/gu;
const ASCII_WORD_TEXT = /^[a-z0-9]+(?: [a-z0-9]+)*$/;

/**
 * A search query as it means: compatibility forms folded (NFKC), lower case, punctuation and runs of
 * whitespace as one space, trimmed. `"Weather in Paris?"` and `"weather  in paris"` mean the same.
 *
 * @example
 * meaningOfQuery('  Weather, in PARIS? '); // 'weather in paris'
 */
export function meaningOfQuery(query: string): string {
  // Most queries are plain lower-case ASCII words: nothing to fold or strip (the hot path skips three passes).
  if (ASCII_WORD_TEXT.test(query)) return query;
  return query.toLowerCase().normalize('NFKC').replace(PUNCTUATION_AND_SPACE, ' ').trim();
}

/** The words of a query's meaning, for telling a reworded retry from another question. */
export const wordsOf = (query: string): string[] => {
  const meaning = meaningOfQuery(query);
  return meaning === '' ? [] : meaning.split(' ');
};

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * Names of query parameters whose only use is to bust caches: jQuery's `_`, `cb`, `t`, `ts`, `nocache` and
 * their kin. Their value changes on every attempt by design.
 */
const CACHE_BUSTER_NAMES = new Set(
  '_ __ _t _ts t ts cb _cb timestamp _timestamp time nocache no_cache nc cachebust cachebuster cache_bust cache_buster cache bust buster rnd rand random nonce _nonce _r'.split(
    ' ',
  ),
);
// A `Math.random()` fraction. A ten-digit number is as often an id as a time in seconds: it counts only
// under a cache-buster's name; a thirteen-digit one only when it is the time the request was sent (`Date.now()`).
const RANDOM_FRACTION = /^0?\.\d{6,}$/;
const MILLISECONDS = /^1\d{12}$/;
// How far a `Date.now()` cache-buster may be from the request's time (the agent's clock and the gateway's).
const NOW_WITHIN_MS = 24 * 3_600_000;

/**
 * Whether a query parameter only busts caches: a cache-buster's name, a random fraction whatever its name,
 * or a millisecond timestamp within a day of `near` (when the request was sent: the gateway's clock and the
 * real one) whatever its name (`?v=1732540800123`). A 13-digit id far from then is an id. Such a parameter
 * does not change what is asked.
 */
const bustsCaches = (name: string, value: string, near: readonly number[] = [Date.now()]) =>
  CACHE_BUSTER_NAMES.has(name.toLowerCase()) ||
  RANDOM_FRACTION.test(value) ||
  (MILLISECONDS.test(value) && near.some((t) => Math.abs(Number(value) - t) <= NOW_WITHIN_MS));

/**
 * A URL as it means for a retry: cache-buster parameters (see `bustsCaches`) are left out; the scheme (http or https), a leading `www.`, a trailing dot or slash, the
 * fragment and the order of query parameters do not matter; the host is lower case and escapes of
 * characters that need none are decoded (WHATWG parsing). Text that is no URL is only trimmed.
 *
 * @example
 * meaningOfUrl('HTTPS://www.Example.com./a/?b=2&a=1#top'); // 'example.com/a?a=1&b=2'
 */
export function meaningOfUrl(url: string, near?: readonly number[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return url.trim();
  }
  const host = parsed.hostname.replace(/\.$/, '').replace(/^www\./, '');
  const port = parsed.port && parsed.port !== DEFAULT_PORTS[parsed.protocol] ? `:${parsed.port}` : '';
  // RFC 3986 normalisation: escapes of unreserved characters decoded, the others in upper case.
  let path = parsed.pathname.replace(/%([0-9A-Fa-f]{2})/g, (sequence, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(char) ? char : sequence.toUpperCase();
  });
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (path === '/') path = '';
  const params = [...parsed.searchParams]
    .filter(([name, value]) => !bustsCaches(name, value, near))
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const query = params.length > 0 ? `?${new URLSearchParams(params)}` : '';
  return `${host}${port}${path}${query}`;
}

/** What `requestKey` needs of a tool: its name and what makes two of its calls the same (its definition). */
export interface MeaningOfCalls {
  readonly name: string;
  requestMeaning(body: Record<string, unknown>, near?: readonly number[]): readonly string[];
}

/**
 * The journal's key of a tool call's meaning: the tool, then the parts of the body its definition says
 * carry the meaning (the meaning of its query or URL, and the other fields the gateway acts on, as parsed,
 * defaults filled in); fields it ignores are left out. Equal keys, the same question.
 *
 * @example
 * requestKey(webSearch, { query: 'Weather?', count: 5, attempt: 2 }) === requestKey(webSearch, { query: 'weather', count: 5 });
 */
export function requestKey(
  tool: MeaningOfCalls,
  body: Record<string, unknown>,
  near?: readonly number[],
): string {
  return keyOfParts(tool.name, ...tool.requestMeaning(body, near));
}

/** `key_` and FNV-1a (32 bit) over the parts, each ended by a NUL; no string is built on the way. */
function keyOfParts(...parts: string[]): string {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) {
      hash ^= part.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    hash = Math.imul(hash, 0x01000193); // the NUL after each part
  }
  return `key_${(hash >>> 0).toString(16).padStart(8, '0')}`;
}
