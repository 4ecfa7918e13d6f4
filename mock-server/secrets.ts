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

/** Well-known secret shapes: a match is a secret whoever it belongs to. */
const PATTERNS: [SecretKind, RegExp][] = [
  ['identity_token', /agt1\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{43}/g],
  ['aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g],
  ['openai_style_key', /\bsk-[A-Za-z0-9_-]{20,}/g],
  ['slack_token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/g],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
  ['private_key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/g],
];

// Cheap pre-filter: text without any of these cannot match a pattern above.
const MAYBE_PATTERN = /agt1\.|AKIA|ASIA|gh[pousr]_|sk-|xox|eyJ|-----BEGIN/;

export interface KnownSecrets {
  /** The caller's own identity token and API key. */
  ownToken?: string;
  ownApiKey?: string;
  /** Every API key the identity provider knows. */
  apiKeys?: Iterable<string>;
  /** Canary secrets planted in fixture pages. */
  canaries?: readonly string[];
}

export interface ScanResult {
  redacted: string;
  kinds: SecretKind[];
}

/** A secret as it may appear in text (plain or URL-encoded), with its kind and, for API keys, its agent. */
export interface SecretLiteral {
  form: string;
  kind: SecretKind;
  owner?: string;
}

// Characters encodeURIComponent leaves alone: a secret made only of them has a single form.
const URI_SAFE = /^[A-Za-z0-9\-_.!~*'()]*$/;
const forms = (secret: string) => {
  if (URI_SAFE.test(secret)) return [secret];
  const encoded = encodeURIComponent(secret);
  return encoded === secret ? [secret] : [secret, encoded];
};

/** The literal forms of known secrets; build once and reuse (encoding every key per request is costly). */
export function secretLiterals(
  apiKeys: Iterable<{ key: string; owner?: string }>,
  canaries: readonly string[],
): SecretLiteral[] {
  const literals: SecretLiteral[] = [];
  for (const { key, owner } of apiKeys) {
    if (key.length >= 8) for (const form of forms(key)) literals.push({ form, kind: 'api_key', owner });
  }
  for (const canary of canaries) {
    if (canary.length >= 8) for (const form of forms(canary)) literals.push({ form, kind: 'canary_secret' });
  }
  return literals;
}

/** Scans with prebuilt literals; the caller's own token and API key are reported as `own_*`. */
export function scanWith(
  text: string,
  literals: readonly SecretLiteral[],
  own: { token?: string; agentId?: string } = {},
): ScanResult {
  let redacted = text;
  const kinds = new Set<SecretKind>();
  const replace = (form: string, kind: SecretKind) => {
    if (!redacted.includes(form)) return;
    redacted = redacted.split(form).join(`[REDACTED:${kind}]`);
    kinds.add(kind);
  };
  if (own.token && own.token.length >= 8)
    for (const form of forms(own.token)) replace(form, 'own_identity_token');
  for (const literal of literals) {
    replace(
      literal.form,
      literal.kind === 'api_key' && literal.owner !== undefined && literal.owner === own.agentId
        ? 'own_api_key'
        : literal.kind,
    );
  }
  if (MAYBE_PATTERN.test(redacted)) {
    for (const [kind, pattern] of PATTERNS) {
      const replaced = redacted.replace(pattern, `[REDACTED:${kind}]`);
      if (replaced !== redacted) kinds.add(kind);
      redacted = replaced;
    }
  }
  return { redacted, kinds: [...kinds] };
}

/**
 * Scans text for the caller's secrets, other known secrets and well-known secret patterns.
 *
 * @example
 * scanForSecrets('weather key=AKIAABCDEFGHIJKLMNOP', {}); // { redacted: 'weather key=[REDACTED:aws_access_key]', kinds: ['aws_access_key'] }
 */
export function scanForSecrets(text: string, known: KnownSecrets): ScanResult {
  const keys = [
    ...(known.ownApiKey ? [{ key: known.ownApiKey, owner: 'self' }] : []),
    ...[...(known.apiKeys ?? [])].map((key) => ({ key })),
  ];
  return scanWith(text, secretLiterals(keys, known.canaries ?? []), {
    token: known.ownToken,
    agentId: 'self',
  });
}

/**
 * The gateway's scanner: the literal forms of every API key and canary are rebuilt only when the agent
 * registry changes, so a request pays a handful of `includes` calls.
 */
export function createSecretScanner(source: {
  version(): number;
  keys(): Iterable<{ key: string; owner: string }>;
  canaries: readonly string[];
}) {
  let builtFor = -1;
  let literals: SecretLiteral[] = [];
  return (text: string, own: { token?: string; agentId?: string }): ScanResult => {
    if (builtFor !== source.version()) {
      literals = secretLiterals(source.keys(), source.canaries);
      builtFor = source.version();
    }
    return scanWith(text, literals, own);
  };
}
