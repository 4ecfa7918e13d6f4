import { type BoundedMap, createBoundedMap } from '../bounded-map.ts';
import { asText, rot13 } from '../text-encodings.ts';

/**
 * Finds secrets in what an agent sends out (search queries, fetch URLs): spec section 1, client safety
 * rule 2. The journal stores the text with every finding replaced by `[REDACTED:<kind>]`.
 */
export type SecretKind =
  | 'own_identity_token'
  | 'identity_token'
  | 'own_api_key'
  | 'api_key'
  | 'canary_secret'
  | 'aws_access_key'
  | 'github_token'
  | 'openai_style_key'
  | 'slack_token'
  | 'jwt'
  | 'private_key';

/**
 * Identity tokens are `agt1.<base64url payload>.<43-char base64url signature>`. The prefix is constant, so
 * `<payload>.<signature>` alone is the whole token too. Without the prefix the shape is that of any long
 * dotted word, so the signature must mix upper- and lower-case letters (a random 43-character base64url
 * string lacks one of them with probability about 4e-10); ordinary words, slugs and host names do not.
 * The look-behind lets the prefix-less branch start only where a run of base64url characters starts (a match
 * starting inside a run also matches from its start), which keeps the scan linear in the text's length.
 */
const IDENTITY_TOKEN =
  /agt1\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{43}|(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{10,}\.(?=[A-Za-z0-9_-]{0,42}[A-Z])(?=[A-Za-z0-9_-]{0,42}[a-z])[A-Za-z0-9_-]{43}/g;

/**
 * Whether a key-shaped match holds random material, not words: a run of 16+ letters and digits (between
 * `-` and `_`) with both in it. `sk-learn-pipeline-tutorial` and `sk-hynix-posts-2024-10-24` (a URL slug)
 * have none; a generated key has one with near certainty.
 */
const RANDOM_RUN = /[A-Za-z0-9]{16,}/g;
const looksRandom = (match: string) =>
  (match.match(RANDOM_RUN) ?? []).some((run) => /[0-9]/.test(run) && /[A-Za-z]/.test(run));

/**
 * Well-known secret shapes: a match is a secret whoever it belongs to. Where words can take the same
 * shape, a third element tells a secret from prose.
 */
const PATTERNS: [SecretKind, RegExp, ((match: string) => boolean)?][] = [
  // Before identity tokens: an HS256 JWT ends in `<payload>.<43-character signature>` too.
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
  ['identity_token', IDENTITY_TOKEN],
  ['aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g],
  ['openai_style_key', /\bsk-[A-Za-z0-9_-]{20,}/g, looksRandom],
  // Slack tokens are numeric ids then a secret (`xoxb-123…-456…-AbC…`); `xoxb-your-bot-token-here` is not.
  ['slack_token', /\bxox[abposr]-[0-9]+-[A-Za-z0-9-]{10,}/g],
  // The header with key material after it (`+` for a space: a form-encoded query string sends it so);
  // the header alone is what someone searching for an error message types.
  ['private_key', /-----BEGIN[ +][A-Z +]*PRIVATE[ +]KEY-----(?:\s|\+|%0A|%0D|\\n)*[A-Za-z0-9+/=]{40,}/g],
];

// Cheap pre-filter: text without any of these cannot match a pattern above (every identity token, with or
// without its prefix, has a dot followed by 43 base64url characters).
const MAYBE_PATTERN = /AKIA|ASIA|gh[pousr]_|sk-|xox|eyJ|-----BEGIN|\.[A-Za-z0-9_-]{43}/;

export interface ScanResult {
  redacted: string;
  kinds: SecretKind[];
  /** Kinds found only together with the agent's previous outgoing text: a secret split across two requests. */
  split?: SecretKind[];
}

/** Who sent the text, for telling their own secrets from others'. */
export interface ScanCaller {
  /** The identity token the request carried. */
  token?: string;
  agentId?: string;
  /**
   * The text is what a tool call sends out (a query or URL): it is remembered per agent, in part, so that a
   * secret split across this and the agent's next outgoing text is found. Other texts (request ids, paths)
   * are scanned without touching that memory.
   */
  outgoing?: boolean;
}

/** A known secret, with its kind and, for API keys, its agent. */
interface SecretLiteral {
  form: string;
  kind: SecretKind;
  owner?: string;
}

/** Known secrets ready to look for; built once per registry change. */
interface KnownSecrets {
  literals: SecretLiteral[];
  /**
   * With many known secrets (thousands of agents' API keys), the literals by their first PREFIX characters:
   * a scan then looks up each position of the text once instead of searching for every literal, so its
   * cost does not grow with the number of agents. Absent for a few literals, where `indexOf` is cheaper.
   */
  byPrefix?: Map<string, SecretLiteral[]>;
  /** Whether one holds a space, which a form-encoded query string may send as `+`. */
  spaced: boolean;
  /** Each agent's API key, for finding pieces of the caller's own key. */
  keyOf: Map<string, string>;
  /** The canaries long enough to be looked for in pieces. */
  canaries: PartialSecret[];
}

// Every literal has at least this many characters (shorter ones are not looked for).
const PREFIX = 8;
// Up to this many literals, one indexOf each is cheaper than a lookup per position of the text.
const FEW_LITERALS = 32;

function knownSecrets(
  apiKeys: Iterable<{ key: string; owner?: string }>,
  canaries: readonly string[],
): KnownSecrets {
  const literals: SecretLiteral[] = [];
  const keyOf = new Map<string, string>();
  for (const { key, owner } of apiKeys) {
    if (key.length >= PREFIX) literals.push({ form: lower(key), kind: 'api_key', owner });
    if (owner !== undefined) keyOf.set(owner, key);
  }
  for (const canary of canaries)
    if (canary.length >= PREFIX) literals.push({ form: lower(canary), kind: 'canary_secret' });
  const spaced = literals.some((literal) => literal.form.includes(' '));
  const partialCanaries = canaries
    .filter((canary) => canary.length >= PIECE)
    .map((canary) => partialSecret(lower(canary), 'canary_secret'));
  if (literals.length <= FEW_LITERALS) return { literals, spaced, keyOf, canaries: partialCanaries };
  const byPrefix = new Map<string, SecretLiteral[]>();
  for (const literal of literals) {
    const prefix = literal.form.slice(0, PREFIX);
    const same = byPrefix.get(prefix);
    if (same) same.push(literal);
    else byPrefix.set(prefix, [literal]);
  }
  return { literals, byPrefix, spaced, keyOf, canaries: partialCanaries };
}

/**
 * ASCII letters in lower case, every other character kept: the same length, so offsets need no mapping.
 * Known secrets are looked for in lower case in a lower-cased reading: DNS lower-cases host names, so a
 * secret sent out through a host label arrives that way, and an agent may upper-case what it leaks.
 */
const lower = (text: string) => text.replace(/[A-Z]+/g, (run) => run.toLowerCase());

/** A reading of `view` with each character mapped to one character (lower case, rot13): offsets unchanged. */
const sameLength = (view: View, map: (text: string) => string): View => ({
  text: map(view.text),
  source: view,
  escapes: [],
});

const OWN_TOKEN = /^agt1\.([A-Za-z0-9_-]+\.([A-Za-z0-9_-]{43}))$/;
let lastToken: string | undefined;
let lastTokenForms: string[] = [];

/**
 * The caller's own token as it may appear: whole, without its constant `agt1.` prefix, and its signature
 * alone (the part that cannot be rebuilt: the payload is readable claims, the prefix a constant). The payload
 * alone is not a secret and is left alone. Remembers the last token: an agent sends the same one for a while.
 */
function ownTokenForms(token: string | undefined): string[] {
  if (!token || token.length < 8) return [];
  if (token !== lastToken) {
    const parts = OWN_TOKEN.exec(token);
    lastTokenForms = (parts ? [token, parts[1] as string, parts[2] as string] : [token]).map(lower);
    lastToken = token;
  }
  return lastTokenForms;
}

/** An escape sequence decoded into `units` characters at `at`, from `length` characters at `from` of the source. */
interface Escape {
  at: number;
  units: number;
  from: number;
  length: number;
}

/** The text as a client or server may read it; `source` and `escapes` say where its characters came from. */
interface View {
  text: string;
  source?: View;
  escapes?: Escape[];
}

/** The offset in the text as sent of the first character that produced `view.text[index]` (or of its end). */
function originOf(view: View, index: number): number {
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
function readings(text: string, spaced: boolean): View[] {
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

/** A piece of a secret this long is a secret: an 8-character piece could be chance, 16 is not. */
const PIECE = 16;
// A secret split across two requests is looked for in parts of at least this many characters each.
const MIN_PART = 9;

/** A secret a piece of which is a secret too, ready to look for. */
interface PartialSecret {
  form: string;
  kind: SecretKind;
  /** Its 8-character blocks at offsets 0, 8, 16, ... (see `findPieces`). */
  blocks: string[];
  /**
   * Its first and last MIN_PART characters, when it can be split into two parts both shorter than PIECE
   * (longer secrets leave a piece of PIECE characters in one of the two texts, found there).
   */
  head?: string;
  tail?: string;
}

function partialSecret(form: string, kind: SecretKind): PartialSecret {
  const blocks: string[] = [];
  for (let block = 0; block + 8 <= form.length; block += 8) blocks.push(form.slice(block, block + 8));
  const splittable = form.length >= 2 * MIN_PART && form.length < 2 * PIECE - 1;
  return splittable
    ? { form, kind, blocks, head: form.slice(0, MIN_PART), tail: form.slice(-MIN_PART) }
    : { form, kind, blocks };
}

// The caller's own partial secrets, remembered for the last caller (an agent sends the same token a while).
let lastPartial: { known?: KnownSecrets; token?: string; agentId?: string; secrets: PartialSecret[] } = {
  secrets: [],
};

/**
 * The secrets whose pieces are secrets too: the signature of the caller's own token (the part that cannot be
 * rebuilt; a token in another format whole), the caller's own API key, and the canaries.
 */
function partialSecrets(known: KnownSecrets, own: ScanCaller): PartialSecret[] {
  if (lastPartial.known === known && lastPartial.token === own.token && lastPartial.agentId === own.agentId)
    return lastPartial.secrets;
  const secrets: PartialSecret[] = [];
  const forms = ownTokenForms(own.token);
  const secretPart = forms.length === 3 ? forms[2] : forms[0];
  if (secretPart && secretPart.length >= PIECE) secrets.push(partialSecret(secretPart, 'own_identity_token'));
  const key = own.agentId === undefined ? undefined : known.keyOf.get(own.agentId);
  if (key !== undefined && key.length >= 2 * MIN_PART) secrets.push(partialSecret(lower(key), 'own_api_key'));
  secrets.push(...known.canaries);
  lastPartial = { known, token: own.token, agentId: own.agentId, secrets };
  return secrets;
}

/**
 * Pieces of a secret of PIECE or more characters in a reading. Every such piece holds whole one of the
 * secret's 8-character blocks: each block is searched for once, and a hit is widened as far as the text
 * goes on matching the secret. Ordinary text holds none of the blocks.
 */
function findPieces(found: Finding[], view: View, { form, kind, blocks }: PartialSecret) {
  const { text } = view;
  for (let index = 0; index < blocks.length; index++) {
    const needle = blocks[index] as string;
    const block = index * 8;
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      let before = 0;
      while (before < at && before < block && text[at - before - 1] === form[block - before - 1]) before++;
      let after = 0;
      while (
        at + 8 + after < text.length &&
        block + 8 + after < form.length &&
        text[at + 8 + after] === form[block + 8 + after]
      )
        after++;
      if (before + 8 + after >= PIECE) add(found, view, at - before, before + 8 + after, kind);
    }
  }
}

/*
 * Encoded runs. A secret sent base64, base64url or hex encoded is a run of the encoding's alphabet. A run is
 * decoded only when it can be encoded text, which its characters tell without decoding: a printable ASCII
 * byte (0x20..0x7e) starts with a hex digit 2..7, and its top six bits make the first character of a base64
 * group one of I..Z or a..f. Encoded text passes (90% of those positions, leaving room for a few non-ASCII
 * bytes); a git commit hash, a UUID's groups, a random id or an ordinary word fails within a few characters.
 * The decoded bytes are scanned only when they are text.
 */
// Characters of base64 and base64url (`+/` and `-_`), by char code.
const BASE64_CHAR = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_')
  BASE64_CHAR[char.charCodeAt(0)] = 1;
// The shortest run that can hold a secret: base64 of 8 characters (hex needs 16).
const SHORTEST_RUN = 12;
const isHexDigit = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
const isTextHexLead = (code: number) => code >= 50 && code <= 55;
const isTextBase64Lead = (code: number) => (code >= 73 && code <= 90) || (code >= 97 && code <= 102);

/** How the characters `start..end` of `text` (padding excluded) may encode text: `hex`, `base64`, or neither. */
function encodingOf(text: string, start: number, end: number): 'hex' | 'base64' | undefined {
  const length = end - start;
  // Misses allowed at the leading positions: 10% of them.
  let hexMisses = length >= 16 ? Math.floor(0.1 * Math.ceil(length / 2)) : -1;
  let base64Misses = Math.floor(0.1 * Math.ceil(length / 4));
  for (let i = start; i < end && (hexMisses >= 0 || base64Misses >= 0); i++) {
    const code = text.charCodeAt(i);
    const k = i - start;
    if (hexMisses >= 0 && (!isHexDigit(code) || (k % 2 === 0 && !isTextHexLead(code)))) {
      if (!isHexDigit(code)) hexMisses = -1;
      else hexMisses--;
    }
    if (k % 4 === 0 && !isTextBase64Lead(code)) base64Misses--;
  }
  if (hexMisses >= 0) return 'hex';
  return base64Misses >= 0 ? 'base64' : undefined;
}

const BASE32_RUN = /^(?:[A-Z2-7]+|[a-z2-7]+)$/;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** What a base32 run (one case, no padding) decodes to as text, or undefined. */
function decodeBase32(run: string): string | undefined {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of run.toUpperCase()) {
    value = (value << 5) | BASE32_ALPHABET.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return asText(Buffer.from(bytes));
}

/** What a candidate run decodes to as text, or undefined. */
function decodeRun(run: string, encoding: 'hex' | 'base64'): string | undefined {
  if (encoding === 'hex') return asText(Buffer.from(run.length % 2 === 0 ? run : run.slice(0, -1), 'hex'));
  // Node's base64 decoder reads both alphabets (`+/` and `-_`) and needs no padding.
  return asText(Buffer.from(run, 'base64'));
}

/**
 * Secrets inside encoded runs of a reading: each run of SHORTEST_RUN or more base64 characters (and each of
 * its `/`-separated parts, where a URL path wraps a base64url blob) that decodes to text is scanned like a
 * reading, and a run holding a secret is redacted whole (with its padding). A loop over char codes finds the
 * runs: text without a candidate costs no regular expression and no allocation.
 */
function scanEncodedRuns(found: Finding[], view: View, secrets: ScanSecrets) {
  const { text } = view;
  let start = -1;
  let slashed = false;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : -1;
    if (code >= 0 && code < 128 && BASE64_CHAR[code] === 1) {
      if (start < 0) {
        start = i;
        slashed = false;
      }
      if (code === 47) slashed = true;
      continue;
    }
    if (start < 0) continue;
    if (i - start >= SHORTEST_RUN) scanRun(found, view, secrets, start, i, slashed);
    start = -1;
  }
}

/** One run at `start..end` of a reading: the run whole, then its `/`-separated parts. */
function scanRun(
  found: Finding[],
  view: View,
  secrets: ScanSecrets,
  start: number,
  end: number,
  slashed: boolean,
) {
  const { text } = view;
  if (tryPart(found, view, secrets, start, end) || !slashed) return;
  let from = start;
  for (let i = start; i <= end; i++) {
    if (i < end && text.charCodeAt(i) !== 47) continue;
    if (i - from >= SHORTEST_RUN && i - from < end - start && tryPart(found, view, secrets, from, i)) return;
    from = i + 1;
  }
}

/** Decodes `start..end` if it can be encoded text; a secret inside redacts it whole. True when one was. */
function tryPart(found: Finding[], view: View, secrets: ScanSecrets, start: number, end: number): boolean {
  const { text } = view;
  const run = text.slice(start, end);
  const encoding = encodingOf(text, start, end);
  // base32 (RFC 4648) in either case: a host label, which DNS lower-cases, carries it that way.
  const decoded =
    (BASE32_RUN.test(run) ? decodeBase32(run) : undefined) ??
    (encoding === undefined ? undefined : decodeRun(run, encoding));
  if (decoded === undefined) return false;
  const inner: Finding[] = [];
  scanView(inner, { text: decoded }, secrets);
  if (!inner.some((f) => f.kind)) return false;
  let padded = end;
  while (padded < text.length && padded - end < 2 && text.charCodeAt(padded) === 61) padded++;
  const from = originOf(view, start);
  const to = originOf(view, padded);
  for (const kind of new Set(inner.flatMap((f) => (f.kind ? [f.kind] : []))))
    found.push({ start: from, end: to, kind });
  return true;
}

/**
 * Per agent, the parts of its secrets its last outgoing text held: `prefix` and `suffix` lengths of each
 * secret (by its text), at least MIN_PART and less than PIECE (longer pieces are secrets by themselves).
 */
type SplitMemory = BoundedMap<string, Map<string, { prefix: number; suffix: number }>>;

/** The longest part of `secret` of MIN_PART..PIECE-1 characters, from its start or its end, in one of the texts. */
function longestPart(texts: readonly string[], secret: string, fromStart: boolean): number {
  const holds = (length: number) => {
    const part = fromStart ? secret.slice(0, length) : secret.slice(-length);
    return texts.some((t) => t.includes(part));
  };
  for (let length = Math.min(PIECE - 1, secret.length - 1); length > MIN_PART; length--)
    if (holds(length)) return length;
  return MIN_PART;
}

/**
 * A secret split across the agent's previous outgoing text and this one: one held its start, the other its
 * end, together all of it (parts shorter than PIECE, which are not secrets alone). The part in this text is
 * redacted (the previous text was journaled already); the memory is updated to this text. A text holding no
 * secret's first or last MIN_PART characters costs two `includes` per secret.
 */
function findSplit(found: Finding[], views: View[], secrets: ScanSecrets, memory: SplitMemory): SecretKind[] {
  const agent = secrets.own.agentId as string;
  const before = memory.get(agent);
  let now: Map<string, { prefix: number; suffix: number }> | undefined;
  const split: SecretKind[] = [];
  for (const { form, kind, head, tail } of secrets.partial) {
    if (head === undefined || tail === undefined) continue;
    let hasHead = false;
    let hasTail = false;
    for (const view of views) {
      hasHead ||= view.text.includes(head);
      hasTail ||= view.text.includes(tail);
    }
    if (!hasHead && !hasTail) continue;
    const texts = views.map((v) => v.text);
    const parts = {
      prefix: hasHead ? longestPart(texts, form, true) : 0,
      suffix: hasTail ? longestPart(texts, form, false) : 0,
    };
    now ??= new Map();
    now.set(form, parts);
    const earlier = before?.get(form);
    if (!earlier) continue;
    // The end here after the start there, or the start here after the end there.
    const piece =
      earlier.prefix > 0 && parts.suffix > 0 && earlier.prefix + parts.suffix >= form.length
        ? form.slice(-parts.suffix)
        : earlier.suffix > 0 && parts.prefix > 0 && earlier.suffix + parts.prefix >= form.length
          ? form.slice(0, parts.prefix)
          : undefined;
    if (piece === undefined) continue;
    for (const view of views) {
      const at = view.text.indexOf(piece);
      if (at !== -1) add(found, view, at, piece.length, kind);
    }
    if (!split.includes(kind)) split.push(kind);
  }
  if (now) memory.set(agent, now);
  else if (before) memory.delete(agent);
  return split;
}

interface Finding {
  start: number;
  end: number;
  /** Absent when the finding only extends one found before (overlapping secrets are reported once). */
  kind?: SecretKind;
}

/**
 * Scans for the caller's own token and API key (reported as `own_*`), other known secrets and well-known
 * shapes; pieces of 16 or more characters of the caller's own secrets (its token's signature, its API key)
 * and of the canaries; and the same inside runs that decode from base64, base64url or hex to text.
 *
 * Every reading of the text (see `readings`) is scanned, and each finding is mapped back to the characters
 * of the text as sent that produced it: `?k=ak%5Fverified%5F2b8d4f6a1c9e` is kept as `?k=[REDACTED:api_key]`.
 * Redacting in the text as sent (rather than keeping a decoded copy) keeps the journal faithful, and cannot
 * leak: every character that encodes a found secret, in any reading, is removed, and the marker that replaces
 * it holds no `%` or `+`, so no escape or secret can form across it. An encoded run that holds a secret is
 * removed whole. Within a reading, the own token comes first, then known keys and canaries, then pieces,
 * then well-known shapes; a finding inside an earlier one is not reported again (the own token is not also
 * an `identity_token`).
 */
function scanWith(text: string, known: KnownSecrets, own: ScanCaller, memory?: SplitMemory): ScanResult {
  const secrets: ScanSecrets = {
    known,
    own,
    ownForms: ownTokenForms(own.token),
    partial: partialSecrets(known, own),
  };
  const found: Finding[] = [];
  const views = readings(text, known.spaced);
  for (const view of views) {
    scanView(found, view, secrets);
    scanEncodedRuns(found, view, secrets);
  }
  const lowered = views.map((view) => sameLength(view, lower));
  const split =
    memory && own.outgoing && own.agentId ? findSplit(found, lowered, secrets, memory) : undefined;
  const result = redact(text, found);
  return split && split.length > 0 ? { ...result, split } : result;
}

/** What one scan looks for. */
interface ScanSecrets {
  known: KnownSecrets;
  own: ScanCaller;
  /** The caller's own token, whole and in the forms that stand for it. */
  ownForms: string[];
  /** Secrets a piece of which is a secret too: the caller's own, and the canaries. */
  partial: PartialSecret[];
}

/** A known secret's kind for this caller: its own API key is `own_api_key`. */
const kindOf = ({ kind, owner }: SecretLiteral, own: ScanCaller): SecretKind =>
  kind === 'api_key' && owner !== undefined && owner === own.agentId ? 'own_api_key' : kind;

/**
 * Everything in one reading of a text: known secrets in lower case and in rot13 (an agent's own token or
 * key rotated is still its own), then well-known shapes.
 */
function scanView(found: Finding[], view: View, secrets: ScanSecrets) {
  scanLiterals(found, sameLength(view, lower), secrets);
  scanLiterals(
    found,
    sameLength(view, (t) => lower(rot13(t))),
    secrets,
  );
  scanShapes(found, view);
}

/** Own token forms, known keys and canaries, and their pieces, in a lower-cased reading (forms lower case). */
function scanLiterals(found: Finding[], view: View, secrets: ScanSecrets) {
  const { known, own, ownForms, partial } = secrets;
  for (const form of ownForms) findAll(found, view, form, 'own_identity_token');
  if (known.byPrefix) {
    const { text } = view;
    for (let i = 0; i + PREFIX <= text.length; i++) {
      const candidates = known.byPrefix.get(text.slice(i, i + PREFIX));
      if (!candidates) continue;
      for (const literal of candidates)
        if (text.startsWith(literal.form, i)) add(found, view, i, literal.form.length, kindOf(literal, own));
    }
  } else {
    for (const literal of known.literals) findAll(found, view, literal.form, kindOf(literal, own));
  }
  for (const secret of partial) findPieces(found, view, secret);
}

/** Well-known secret shapes (case matters to them): in one reading of the text. */
function scanShapes(found: Finding[], view: View) {
  if (MAYBE_PATTERN.test(view.text)) {
    for (const [kind, pattern, holds] of PATTERNS) {
      for (const match of view.text.matchAll(pattern))
        if (!holds || holds(match[0])) add(found, view, match.index, match[0].length, kind);
    }
  }
}

function findAll(found: Finding[], view: View, form: string, kind: SecretKind) {
  for (let index = view.text.indexOf(form); index !== -1; index = view.text.indexOf(form, index + 1)) {
    add(found, view, index, form.length, kind);
  }
}

/** Records a finding in the text as sent, unless an earlier one covers it. */
function add(found: Finding[], view: View, index: number, length: number, kind: SecretKind) {
  const start = originOf(view, index);
  const end = originOf(view, index + length);
  const overlapping = found.filter((f) => f.start < end && start < f.end);
  if (overlapping.some((f) => f.start <= start && end <= f.end)) return;
  found.push({ start, end, kind: overlapping.length > 0 ? undefined : kind });
}

/** Replaces each run of overlapping findings by one marker, named after its first reported finding. */
function redact(text: string, found: readonly Finding[]): ScanResult {
  if (found.length === 0) return { redacted: text, kinds: [] };
  const kinds = [...new Set(found.flatMap((f) => (f.kind ? [f.kind] : [])))];
  const ordered = found.map((f, order) => ({ ...f, order })).sort((a, b) => a.start - b.start);
  let redacted = '';
  let copied = 0;
  for (let i = 0; i < ordered.length; ) {
    const first = ordered[i] as (typeof ordered)[number];
    let end = first.end;
    let named = first.kind ? first : undefined;
    for (i++; i < ordered.length && (ordered[i] as Finding).start < end; i++) {
      const next = ordered[i] as (typeof ordered)[number];
      end = Math.max(end, next.end);
      if (next.kind && (!named || next.order < named.order)) named = next;
    }
    redacted += `${text.slice(copied, first.start)}[REDACTED:${named?.kind ?? kinds[0]}]`;
    copied = end;
  }
  return { redacted: redacted + text.slice(copied), kinds };
}

/**
 * The gateway's scanner: the known keys and canaries are gathered again only when the agent registry
 * changes. A request without `%`-escapes pays one `indexOf` per known secret and one pre-filter test.
 *
 * @example
 * const scan = createSecretScanner({ version: () => 1, keys: () => [], canaries: [] });
 * scan('weather key=AKIAABCDEFGHIJKLMNOP', {}); // { redacted: 'weather key=[REDACTED:aws_access_key]', kinds: ['aws_access_key'] }
 */
export function createSecretScanner(source: {
  version(): number;
  keys(): Iterable<{ key: string; owner: string }>;
  canaries: readonly string[];
}) {
  let builtFor = -1;
  let known: KnownSecrets = { literals: [], spaced: false, keyOf: new Map(), canaries: [] };
  // What each agent's last outgoing text held of its secrets: small, and only for so many agents.
  const memory: SplitMemory = createBoundedMap(SPLIT_MEMORY_AGENTS);
  return (text: string, own: ScanCaller): ScanResult => {
    if (builtFor !== source.version()) {
      known = knownSecrets(source.keys(), source.canaries);
      builtFor = source.version();
    }
    return scanWith(text, known, own, memory);
  };
}

// Agents whose last outgoing text is remembered (in part) for secrets split across two requests.
const SPLIT_MEMORY_AGENTS = 4096;
