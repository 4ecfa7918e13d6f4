import { type BoundedMap, createBoundedMap } from '../bounded-map.ts';
import type { SecretKind } from './patterns.ts';
import { MIN_PART, type PartialSecret, PIECE, partialSecret } from './pieces.ts';
import { lower } from './readings.ts';

/* The secrets the gateway knows (API keys, canaries) and the caller's own, ready to look for. */

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
export interface SecretLiteral {
  form: string;
  kind: SecretKind;
  owner?: string;
}

/** Known secrets ready to look for; built once per registry change. */
export interface KnownSecrets {
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
export const PREFIX = 8;
// Up to this many literals, one indexOf each is cheaper than a lookup per position of the text.
const FEW_LITERALS = 32;

export function knownSecrets(
  apiKeys: Iterable<{ key: string; owner?: string }>,
  canaries: readonly string[],
  adminKeys: readonly string[] = [],
): KnownSecrets {
  const literals: SecretLiteral[] = [];
  for (const key of adminKeys)
    if (key.length >= PREFIX) literals.push({ form: lower(key), kind: 'admin_key' });
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

const OWN_TOKEN = /^agt1\.([A-Za-z0-9_-]+\.([A-Za-z0-9_-]{43}))$/;

/**
 * Callers whose token forms and partial secrets are remembered: every agent of a fleet of 10,000 sending in
 * turn finds its own (a cache of the last caller alone would be rebuilt on every request, lower-casing the
 * token each time); about a kilobyte each, so at most some 16 MB.
 */
const CALLERS_REMEMBERED = 16_384;
const tokenForms = createBoundedMap<string, string[]>(CALLERS_REMEMBERED);

/**
 * The caller's own token as it may appear: whole, without its constant `agt1.` prefix, and its signature
 * alone (the part that cannot be rebuilt: the payload is readable claims, the prefix a constant). The payload
 * alone is not a secret and is left alone. Remembered per token (CALLERS_REMEMBERED).
 */
export function ownTokenForms(token: string | undefined): string[] {
  if (!token || token.length < 8) return [];
  let forms = tokenForms.get(token);
  if (!forms) {
    const parts = OWN_TOKEN.exec(token);
    forms = (parts ? [token, parts[1] as string, parts[2] as string] : [token]).map(lower);
    tokenForms.set(token, forms);
  }
  return forms;
}

// The callers' own partial secrets, per set of known secrets (a new set starts afresh) and agent: those of
// the token it sent last (an agent sends one token a while; looked up by its id, no key built per request).
const partialsOf = new WeakMap<
  KnownSecrets,
  BoundedMap<string | undefined, { token: string | undefined; secrets: PartialSecret[] }>
>();

/**
 * The secrets whose pieces are secrets too: the signature of the caller's own token (the part that cannot be
 * rebuilt; a token in another format whole), the caller's own API key, and the canaries.
 */
export function partialSecrets(known: KnownSecrets, own: ScanCaller): PartialSecret[] {
  let remembered = partialsOf.get(known);
  if (!remembered) {
    remembered = createBoundedMap(CALLERS_REMEMBERED);
    partialsOf.set(known, remembered);
  }
  const cached = remembered.get(own.agentId);
  if (cached !== undefined && cached.token === own.token) return cached.secrets;
  const secrets: PartialSecret[] = [];
  const forms = ownTokenForms(own.token);
  const secretPart = forms.length === 3 ? forms[2] : forms[0];
  if (secretPart && secretPart.length >= PIECE) secrets.push(partialSecret(secretPart, 'own_identity_token'));
  const key = own.agentId === undefined ? undefined : known.keyOf.get(own.agentId);
  if (key !== undefined && key.length >= 2 * MIN_PART) secrets.push(partialSecret(lower(key), 'own_api_key'));
  secrets.push(...known.canaries);
  remembered.set(own.agentId, { token: own.token, secrets });
  return secrets;
}
