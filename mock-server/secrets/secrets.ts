import { createBoundedMap } from '../bounded-map.ts';
import { rot13 } from '../text-encodings.ts';
import { scanEncodedRuns } from './encoded-runs.ts';
import { add, type Finding, findAll, redact, type ScanResult } from './findings.ts';
import {
  type KnownSecrets,
  knownSecrets,
  ownTokenForms,
  PREFIX,
  partialSecrets,
  type ScanCaller,
  type SecretLiteral,
} from './known-secrets.ts';
import { MAYBE_PATTERN, PATTERNS, type SecretKind } from './patterns.ts';
import { findPieces, findSplit, type PartialSecret, type SplitMemory } from './pieces.ts';
import { lower, readings, sameLength, type View } from './readings.ts';

/*
 * The secret scanner, by job: patterns.ts (well-known secret shapes), known-secrets.ts (API keys, canaries,
 * the caller's own token), readings.ts (percent-decoded and `+`-spaced readings, mapped back to the text as
 * sent), encoded-runs.ts (base64, base64url, hex and base32 runs), pieces.ts (pieces of secrets, and secrets
 * split across two requests), findings.ts (findings and redaction). This file puts them together.
 */

export type { ScanResult } from './findings.ts';
export type { ScanCaller } from './known-secrets.ts';
export type { SecretKind } from './patterns.ts';

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
  const scanDecoded = (inner: Finding[], decoded: View) => scanView(inner, decoded, secrets);
  const found: Finding[] = [];
  const views = readings(text, known.spaced);
  for (const view of views) {
    scanView(found, view, secrets);
    scanEncodedRuns(found, view, scanDecoded);
  }
  const lowered = views.map((view) => sameLength(view, lower));
  const split =
    memory && own.outgoing && own.agentId
      ? findSplit(found, lowered, own.agentId, secrets.partial, memory)
      : undefined;
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
  /** The admin key of the gateway or proxy doing the scan: found as `admin_key` in any encoding. */
  adminKeys?: readonly string[];
  /**
   * Called when the known secrets changed after a `frozen()` scan of the previous ones was handed out:
   * the journal then settles, in the background, the entries still holding it, so that an old set is let
   * go of soon (what they find does not change: each reading uses the set of its own call).
   */
  onRetired?(): void;
}): SecretScanner {
  let builtFor = -1;
  let known: KnownSecrets = { literals: [], spaced: false, keyOf: new Map(), canaries: [] };
  let frozen: FrozenScan | undefined;
  const current = () => {
    if (builtFor !== source.version()) {
      known = knownSecrets(source.keys(), source.canaries, source.adminKeys);
      builtFor = source.version();
      if (frozen !== undefined) source.onRetired?.();
      frozen = undefined;
    }
    return known;
  };
  // What each agent's last outgoing text held of its secrets: small, and only for so many agents.
  const memory: SplitMemory = createBoundedMap(SPLIT_MEMORY_AGENTS);
  const scan = (text: string, own: ScanCaller): ScanResult => scanWith(text, current(), own, memory);
  return Object.assign(scan, {
    frozen(): FrozenScan {
      const now = current();
      frozen ??= (text: string, own: ScanCaller, before?: SplitParts) =>
        before === undefined ? scanWith(text, now, own) : scanWith(text, now, own, recalled(own, before));
      return frozen;
    },
    outgoing(text: string, own: ScanCaller): SplitParts | undefined {
      return rememberSplit(text, current(), own, memory);
    },
  });
}

/** What an agent's previous outgoing text held of its secrets (see `SplitMemory`), for a later scan. */
export type SplitParts = ReturnType<SplitMemory['get']> & {};

/**
 * The scanner's memory step alone for an outgoing text, in the order the texts were sent: the agent's
 * memory moves on to this text (as a whole scan moves it), and what it held before is given back, for the
 * scan of this text made later (`frozen()(text, own, before)`) to find a secret split across the two.
 */
function rememberSplit(
  text: string,
  known: KnownSecrets,
  own: ScanCaller,
  memory: SplitMemory,
): SplitParts | undefined {
  const { agentId } = own;
  if (agentId === undefined) return undefined;
  const before = memory.get(agentId);
  const lowered = readings(text, known.spaced).map((view) => sameLength(view, lower));
  findSplit([], lowered, agentId, partialSecrets(known, own), memory);
  return before;
}

/** A memory of one agent's previous outgoing text, for one later scan (the scanner's own has moved on). */
function recalled(own: ScanCaller, before: SplitParts): SplitMemory {
  const memory: SplitMemory = createBoundedMap(1);
  if (own.agentId !== undefined) memory.set(own.agentId, before);
  return memory;
}

/**
 * A scan of the secrets known at one moment. With `before` (what `outgoing` gave back for the agent's
 * previous text) and `outgoing: true`, a secret split across that text and this one is found too.
 */
export type FrozenScan = (text: string, own: ScanCaller, before?: SplitParts) => ScanResult;

/**
 * The gateway's scanner; `frozen()` is the same scan over the secrets known now, for a reading of a text
 * made later (the journal reads a request's texts when the entry is first read): what it finds does not
 * depend on agents registered since. `outgoing` is the split memory's step for an outgoing text, made on
 * the request path in the order texts are sent; its scan is made later with what it gave back.
 */
export type SecretScanner = ((text: string, own: ScanCaller) => ScanResult) & {
  frozen(): FrozenScan;
  outgoing(text: string, own: ScanCaller): SplitParts | undefined;
};

// Agents whose last outgoing text is remembered (in part) for secrets split across two requests.
const SPLIT_MEMORY_AGENTS = 4096;
