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

const variants = (secret: string) => {
  const encoded = encodeURIComponent(secret);
  return encoded === secret ? [secret] : [secret, encoded];
};

/**
 * Scans text for the caller's secrets, other known secrets and well-known secret patterns.
 *
 * @example
 * scanForSecrets('weather key=AKIAABCDEFGHIJKLMNOP', {}); // { redacted: 'weather key=[REDACTED:aws_access_key]', kinds: ['aws_access_key'] }
 */
export function scanForSecrets(text: string, known: KnownSecrets): ScanResult {
  let redacted = text;
  const kinds = new Set<SecretKind>();
  const replaceLiteral = (secret: string | undefined, kind: SecretKind) => {
    if (!secret || secret.length < 8) return;
    for (const form of variants(secret)) {
      if (!redacted.includes(form)) continue;
      redacted = redacted.split(form).join(`[REDACTED:${kind}]`);
      kinds.add(kind);
    }
  };
  replaceLiteral(known.ownToken, 'own_identity_token');
  replaceLiteral(known.ownApiKey, 'own_api_key');
  for (const key of known.apiKeys ?? []) replaceLiteral(key, 'api_key');
  for (const canary of known.canaries ?? []) replaceLiteral(canary, 'canary_secret');
  if (MAYBE_PATTERN.test(redacted)) {
    for (const [kind, pattern] of PATTERNS) {
      const replaced = redacted.replace(pattern, `[REDACTED:${kind}]`);
      if (replaced !== redacted) kinds.add(kind);
      redacted = replaced;
    }
  }
  return { redacted, kinds: [...kinds] };
}
