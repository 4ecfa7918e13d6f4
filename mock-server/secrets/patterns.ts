import { isPlaceholder } from './placeholders.ts';

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
  /** The gateway's or the proxy's own admin key, in any encoding. */
  | 'admin_key'
  | 'aws_access_key'
  | 'github_token'
  | 'openai_style_key'
  | 'slack_token'
  | 'gitlab_token'
  | 'google_api_key'
  | 'stripe_key'
  | 'npm_token'
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
 * A JSON Web Token (JWS `header.payload.signature`, an unsecured one with an empty signature, or a JWE of
 * five parts) whatever its header's spelling: the header is base64url of a JSON object, so it starts `ey`
 * (`{"`, `{ "`: `eyJ`, `eyAi`) or `ew` (`{` and a line break or tab); it must decode to an object holding a
 * quoted name. The whole token goes, payload and signature with the header.
 */
const JWT = /\be[wy][A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}/g;
const isJwt = (match: string) => {
  const [head = '', , signature = ''] = match.split('.');
  const header = Buffer.from(head, 'base64url').toString('utf8');
  if (!/^\{\s*"/.test(header) || isPlaceholder(match)) return false;
  // An empty or short signature only for an unsecured token (`"alg": "none"`): else a sentence's full stop.
  return signature.length >= 8 || /"alg"\s*:\s*"none"/i.test(header);
};

/**
 * Well-known secret shapes: a match is a secret whoever it belongs to. Where words can take the same
 * shape, a third element tells a secret from prose.
 */
export const PATTERNS: [SecretKind, RegExp, ((match: string) => boolean)?][] = [
  // Before identity tokens: an HS256 JWT ends in `<payload>.<43-character signature>` too.
  ['jwt', JWT, isJwt],
  ['identity_token', IDENTITY_TOKEN, (m) => !isPlaceholder(m)],
  // Documentation placeholders (AKIAIOSFODNN7EXAMPLE, jwt.io's sample, `ghp_xxxx…`) are not secrets.
  ['aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, (m) => !isPlaceholder(m)],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, (m) => !isPlaceholder(m)],
  ['openai_style_key', /\bsk-[A-Za-z0-9_-]{20,}/g, looksRandom],
  // Slack tokens are numeric ids then a secret (`xoxb-123…-456…-AbC…`); `xoxb-your-bot-token-here` is not.
  ['slack_token', /\bxox[abposr]-[0-9]+-[A-Za-z0-9-]{10,}/g],
  // GitLab personal, deploy, runner and CI tokens (`glpat-` and kin, 20 characters after the prefix).
  ['gitlab_token', /\bgl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_-]{20,}/g, looksRandom],
  ['google_api_key', /\bAIza[0-9A-Za-z_-]{35}\b/g],
  ['stripe_key', /\b(?:sk|rk|pk)_live_[A-Za-z0-9]{20,}/g],
  ['npm_token', /\bnpm_[A-Za-z0-9]{36}\b/g],
  // The header with key material after it (`+` for a space: a form-encoded query string sends it so);
  // the header alone is what someone searching for an error message types.
  ['private_key', /-----BEGIN[ +][A-Z +]*PRIVATE[ +]KEY-----(?:\s|\+|%0A|%0D|\\n)*[A-Za-z0-9+/=]{40,}/g],
];

// Cheap pre-filter: text without any of these cannot match a pattern above (every identity token, with or
// without its prefix, has a dot followed by 43 base64url characters).
export const MAYBE_PATTERN =
  /AKIA|ASIA|gh[pousr]_|sk-|xox|gl[a-z]{1,5}-|AIza|_live_|npm_|\be[wy][A-Za-z0-9_-]{6,}\.|-----BEGIN|\.[A-Za-z0-9_-]{43}/;
