import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

/** What a token says about itself. Times are milliseconds since the epoch on the gateway clock. */
export interface TokenClaims {
  /** Agent id. */
  sub: string;
  /** Token id, unique per minted token. */
  jti: string;
  iss: string;
  iat: number;
  exp: number;
  /** The agent's token generation when minted; revoking tokens moves the agent to the next one. */
  gen: number;
  /**
   * The agent's incarnation when minted (agent-registry.ts): a token of a deleted agent never speaks for a
   * new agent with the same id. Absent: the first life of a configured agent (`c0`).
   */
  inc?: string;
}

export type DecodeFailure = 'malformed' | 'bad_signature';
type DecodeResult = { ok: true; claims: TokenClaims } | { ok: false; reason: DecodeFailure };

const PREFIX = 'agt1';
const SEGMENT = /^[A-Za-z0-9_-]+$/;
// HMAC-SHA256 is 32 bytes: 43 base64url characters without padding.
const SIGNATURE_LENGTH = 43;

/**
 * Encodes and checks identity tokens: `agt1.<base64url claims>.<base64url HMAC-SHA256>`.
 * The signature covers the exact characters of the first two segments, so changing, dropping or adding
 * any character is detected (no lenient base64 decoding of the signature).
 *
 * @example
 * const codec = createTokenCodec('a-long-signing-secret');
 * const token = codec.encode({ sub: 'agent-early', jti: 'x', iss: 'idp', iat: 0, exp: 1000, gen: 0 });
 * codec.decode(token); // { ok: true, claims: { sub: 'agent-early', ... } }
 */
export function createTokenCodec(secret: string) {
  const key: KeyObject = createSecretKey(Buffer.from(secret, 'utf8'));
  const sign = (signed: string) => createHmac('sha256', key).update(signed).digest('base64url');

  return {
    encode(claims: TokenClaims): string {
      const signed = `${PREFIX}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${signed}.${sign(signed)}`;
    },

    decode(token: string): DecodeResult {
      const parts = token.split('.');
      if (parts.length !== 3) return { ok: false, reason: 'malformed' };
      const [prefix, payload, signature] = parts as [string, string, string];
      if (
        prefix !== PREFIX ||
        !SEGMENT.test(payload) ||
        signature.length !== SIGNATURE_LENGTH ||
        !SEGMENT.test(signature)
      ) {
        return { ok: false, reason: 'malformed' };
      }
      const expected = Buffer.from(sign(`${prefix}.${payload}`));
      if (!timingSafeEqual(expected, Buffer.from(signature))) return { ok: false, reason: 'bad_signature' };
      const claims = parseClaims(payload);
      return claims ? { ok: true, claims } : { ok: false, reason: 'malformed' };
    },
  };
}

/**
 * The agent a token in this gateway's format says it was minted for, and when, without checking its
 * signature: for attribution only (whose request a refused token was: one cached from an earlier run, signed
 * with another secret), never for access.
 */
export function claimedAgent(token: string): { agent: string; issuedAt: number } | undefined {
  const [prefix, payload, signature, ...rest] = token.split('.');
  if (prefix !== PREFIX || payload === undefined || signature === undefined || rest.length > 0)
    return undefined;
  if (!SEGMENT.test(payload)) return undefined;
  const claims = parseClaims(payload);
  return claims && { agent: claims.sub, issuedAt: claims.iat };
}

function parseClaims(payload: string): TokenClaims | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const c = value as Record<string, unknown>;
  const valid =
    typeof c.sub === 'string' &&
    typeof c.jti === 'string' &&
    typeof c.iss === 'string' &&
    Number.isFinite(c.iat) &&
    Number.isFinite(c.exp) &&
    Number.isInteger(c.gen) &&
    (c.inc === undefined || typeof c.inc === 'string');
  return valid ? (c as unknown as TokenClaims) : undefined;
}
