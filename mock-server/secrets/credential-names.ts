/*
 * Which names speak of a credential: a header (`Private-Token`, `X-Auth-Token`, `Set-Cookie`), a JSON field
 * (`client_secret`, `apiKey`), a form or query parameter (`access_token`, `user[password]`), a multipart
 * part. One rule for all of them, so the journal, the NDJSON and the HAR export redact alike wherever a
 * credential sits. The value under such a name is redacted whatever it looks like; the secret scan still
 * reads every other value for the shapes it knows.
 */

/** A name as words: `X-Auth-Token`, `x_auth_token`, `xAuthToken` and `X AUTH TOKEN` all give x, auth, token. */
const wordsOf = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/**
 * A word that speaks of a credential. `auth` but not `author`/`authority`; `token` but not `tokenizer`;
 * `key` at a word's end (`apikey`, `privatekey`); `pass` and `pw` alone (not `bypass`).
 */
const CREDENTIAL_WORD =
  /auth(?!or(?!i[sz]))|token(?!i[sz])|secret|passw|passphrase|^pass$|^pw$|pwd|session|^sid$|cookie|credential|^creds?$|keys?$|signature|^sig$|bearer|jwt|^otp$|^pin$|passcode|hmac|^mfa$|csrf|xsrf/;

/** Words before `token` or `tokens` that make the name a count (`max_token`, `prompt_tokens`). */
const COUNT_WORDS = [
  'max',
  'min',
  'total',
  'num',
  'prompt',
  'completion',
  'input',
  'output',
  'count',
  'usage',
  'cached',
  'reasoning',
  'remaining',
  'limit',
];

/**
 * The exceptions to the rule, in one place (docs/operators.md lists them): names that hold one of the
 * words above and still hold no credential. Each is the word before the credential word, and what it makes
 * of it. Everything else with a credential word is redacted, whatever its value looks like: a false
 * redaction hides a value, a missed one publishes a secret. `primary_key`/`secondary_key` are secrets
 * (Azure's keys go by these names); `reset_token` is one (a password-reset link's), `reset_tokens` a count.
 */
const NOT_CREDENTIAL_NAMES = {
  /** Before `tokens` (plural), a count or a duration of tokens (`max_tokens`, `x-ratelimit-reset-tokens`). */
  countedTokens: [...COUNT_WORDS, 'reset'],
  /** Before `token` or `tokens`, always a count (`max_token`, `total_token`): not `reset`, whose `reset_token` is a secret. */
  countedToken: COUNT_WORDS,
  /** Before `key` or `keys`, an identifier rather than a secret (`idempotency-key`, `public_key`, `sort_key`). */
  identifierKey: ['idempotency', 'public', 'foreign', 'sort', 'partition', 'cache'],
  /** Whole names: CORS headers name credentials without holding one (`Access-Control-Allow-Credentials`). */
  prefixes: ['access-control-'],
} as const;

const COUNTED_TOKENS = new Set<string>(NOT_CREDENTIAL_NAMES.countedTokens);
const COUNTED_TOKEN = new Set<string>(NOT_CREDENTIAL_NAMES.countedToken);
const NOT_SECRET_KEY = new Set<string>(NOT_CREDENTIAL_NAMES.identifierKey);

// Names seen, and whether each speaks of a credential: the same few names recur in every body (bounded).
const known = new Map<string, boolean>();
const KNOWN_NAMES = 4096;

/** Whether a name speaks of a credential, with no exception. */
export function speaksOfCredential(name: string): boolean {
  let answer = known.get(name);
  if (answer === undefined) {
    answer = judgeName(name);
    if (known.size >= KNOWN_NAMES) known.clear();
    known.set(name, answer);
  }
  return answer;
}

function judgeName(name: string): boolean {
  const lowered = name.toLowerCase();
  if (NOT_CREDENTIAL_NAMES.prefixes.some((prefix) => lowered.startsWith(prefix))) return false;
  const words = wordsOf(name);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (!CREDENTIAL_WORD.test(word)) continue;
    const before = words[i - 1];
    if (word === 'tokens' && before !== undefined && COUNTED_TOKENS.has(before)) continue;
    if (word === 'token' && before !== undefined && COUNTED_TOKEN.has(before)) continue;
    if (/^keys?$/.test(word) && before !== undefined && NOT_SECRET_KEY.has(before)) continue;
    return true;
  }
  return false;
}

/** A name's comparable form: lower case, letters and digits only (`X-Upstream-Token` is `xupstreamtoken`). */
const comparableName = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Whether a name's value is redacted as a credential: it speaks of one, and the user did not keep it. */
export type IsCredentialName = (name: string) => boolean;

/**
 * The credential rule with the names a user keeps (`--keep-field NAME`), in any spelling: `X-Upstream-Token`,
 * `x_upstream_token` and `xUpstreamToken` keep the same field.
 *
 * @example
 * const isCredential = credentialNames(['x-request-signature']);
 * isCredential('Private-Token'); // true
 * isCredential('X_Request_Signature'); // false (kept)
 */
export function credentialNames(keep: Iterable<string> = []): IsCredentialName {
  const kept = new Set([...keep].map(comparableName));
  if (kept.size === 0) return speaksOfCredential;
  return (name) => !kept.has(comparableName(name)) && speaksOfCredential(name);
}
