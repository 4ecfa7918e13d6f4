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
  for (const { key, owner } of apiKeys)
    if (key.length >= PREFIX) literals.push({ form: key, kind: 'api_key', owner });
  for (const canary of canaries)
    if (canary.length >= PREFIX) literals.push({ form: canary, kind: 'canary_secret' });
  const spaced = literals.some((literal) => literal.form.includes(' '));
  if (literals.length <= FEW_LITERALS) return { literals, spaced };
  const byPrefix = new Map<string, SecretLiteral[]>();
  for (const literal of literals) {
    const prefix = literal.form.slice(0, PREFIX);
    const same = byPrefix.get(prefix);
    if (same) same.push(literal);
    else byPrefix.set(prefix, [literal]);
  }
  return { literals, byPrefix, spaced };
}

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
    lastTokenForms = parts ? [token, parts[1] as string, parts[2] as string] : [token];
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

interface Finding {
  start: number;
  end: number;
  /** Absent when the finding only extends one found before (overlapping secrets are reported once). */
  kind?: SecretKind;
}

/**
 * Scans for the caller's own token and API key (reported as `own_*`), other known secrets and well-known
 * shapes.
 *
 * Every reading of the text (see `readings`) is scanned, and each finding is mapped back to the characters
 * of the text as sent that produced it: `?k=ak%5Fverified%5F2b8d4f6a1c9e` is kept as `?k=[REDACTED:api_key]`.
 * Redacting in the text as sent (rather than keeping a decoded copy) keeps the journal faithful, and cannot
 * leak: every character that encodes a found secret, in any reading, is removed, and the marker that replaces
 * it holds no `%` or `+`, so no escape or secret can form across it. Within a reading, the own token comes
 * first, then known keys and canaries, then well-known shapes; a finding inside an earlier one is not reported
 * again (the own token is not also an `identity_token`).
 */
function scanWith(text: string, known: KnownSecrets, own: { token?: string; agentId?: string }): ScanResult {
  const ownForms = ownTokenForms(own.token);
  const found: Finding[] = [];
  for (const view of readings(text, known.spaced)) {
    for (const form of ownForms) findAll(found, view, form, 'own_identity_token');
    const kindOf = ({ kind, owner }: SecretLiteral) =>
      kind === 'api_key' && owner !== undefined && owner === own.agentId ? 'own_api_key' : kind;
    if (known.byPrefix) {
      const { text } = view;
      for (let i = 0; i + PREFIX <= text.length; i++) {
        const candidates = known.byPrefix.get(text.slice(i, i + PREFIX));
        if (!candidates) continue;
        for (const literal of candidates)
          if (text.startsWith(literal.form, i)) add(found, view, i, literal.form.length, kindOf(literal));
      }
    } else {
      for (const literal of known.literals) findAll(found, view, literal.form, kindOf(literal));
    }
    if (MAYBE_PATTERN.test(view.text)) {
      for (const [kind, pattern, holds] of PATTERNS) {
        for (const match of view.text.matchAll(pattern))
          if (!holds || holds(match[0])) add(found, view, match.index, match[0].length, kind);
      }
    }
  }
  return redact(text, found);
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
  let known: KnownSecrets = { literals: [], spaced: false };
  return (text: string, own: { token?: string; agentId?: string }): ScanResult => {
    if (builtFor !== source.version()) {
      known = knownSecrets(source.keys(), source.canaries);
      builtFor = source.version();
    }
    return scanWith(text, known, own);
  };
}
