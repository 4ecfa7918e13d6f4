import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Signing secrets anyone can read: the development secret this project's default config shipped with until
 * tokens were signed with a random secret per process. A gateway using one accepts tokens minted by anyone.
 */
export const PUBLIC_SIGNING_SECRETS: readonly string[] = ['dev-only-signing-secret-change-me'];

/**
 * Shorter secrets are accepted (the config needs 16 characters) but warned about: HMAC-SHA256 wants a key of
 * at least its output size, 32 bytes (RFC 2104 section 3, RFC 7518 section 3.2).
 */
const RECOMMENDED_SECRET_LENGTH = 32;

let processSecret: string | undefined;

/**
 * The signing secret of this process when the config sets none: 32 random bytes, drawn once, so every gateway
 * of the process (and a reset or scenario change) keeps accepting the tokens it minted, and no other process
 * can mint them.
 */
export function processSigningSecret(): string {
  processSecret ??= randomBytes(32).toString('base64url');
  return processSecret;
}

/** What is wrong with a configured signing secret, if anything. */
type SecretProblem = 'public' | 'short';

/**
 * Judges a configured signing secret (undefined: none configured, the random per-process one is used, which
 * is fine). `public`: published, anyone can forge tokens; `short`: under 32 characters.
 *
 * @example
 * signingSecretProblem('dev-only-signing-secret-change-me'); // 'public'
 * signingSecretProblem(undefined); // undefined
 */
export function signingSecretProblem(secret: string | undefined): SecretProblem | undefined {
  if (secret === undefined) return undefined;
  if (PUBLIC_SIGNING_SECRETS.includes(secret) || /change-?me/i.test(secret)) return 'public';
  if (secret.length < RECOMMENDED_SECRET_LENGTH) return 'short';
  return undefined;
}

/** The warning to print for a problem secret, naming the way out. */
export function signingSecretWarning(problem: SecretProblem): string {
  const fix =
    'Remove identity.signing_secret (and AGENT_GATEWAY_SIGNING_SECRET) to sign with a random secret per ' +
    'process, or set a private random one of 32 characters or more (e.g. `openssl rand -base64 32`).';
  return problem === 'public'
    ? `WARNING: the identity token signing secret is public: anyone can mint a valid token for any agent of this gateway. ${fix}`
    : `WARNING: the identity token signing secret is shorter than ${RECOMMENDED_SECRET_LENGTH} characters: it may be guessed, and then anyone can mint tokens. ${fix}`;
}

/**
 * Whether a listening host only accepts connections from this machine: `localhost`, 127.0.0.0/8, `::1`
 * (and its IPv4-mapped form). `0.0.0.0`, `::` and every other address are reachable from elsewhere.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

/**
 * Why the gateway must not listen on `host` with this signing secret: a public secret on a host others can
 * reach lets them mint tokens for any agent. Undefined when it may listen (loopback, a private or random
 * secret, or `force`: `serve --allow-public-secret`).
 */
export function publicSecretRefusal(
  secret: string | undefined,
  host: string,
  force: boolean,
): string | undefined {
  if (force || isLoopbackHost(host) || signingSecretProblem(secret) !== 'public') return undefined;
  return `Refusing to listen on ${host} with a public identity signing secret: anyone who can reach the gateway could mint a token for any agent. Remove identity.signing_secret and AGENT_GATEWAY_SIGNING_SECRET (each process then signs with a random secret), set a private one, or pass --allow-public-secret to listen anyway.`;
}
