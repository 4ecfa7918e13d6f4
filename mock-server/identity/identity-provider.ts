import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { GatewayError } from '../errors.ts';
import type { Agent, AgentRegistry } from './agent-registry.ts';
import { createTokenCodec, type DecodeFailure, type TokenClaims } from './token-codec.ts';
import { createTokenMemo } from './token-memo.ts';

/** Who a valid token speaks for: what the gateway needs for policy and whoami. */
export interface Identity {
  agentId: string;
  name: string;
  tier: string;
  allowlist: readonly string[];
  tokenId: string;
  issuedAt: number;
  expiresAt: number;
  /**
   * The token generation it was minted under (in-process identity provider only): a shared store refuses
   * it once any instance revoked that generation.
   */
  generation?: number;
}

/** The identity a token speaks for: the agent as the registry knows it now, and the token's own facts. */
export const identityOf = (
  agent: Agent,
  token: { tokenId: string; issuedAt: number; expiresAt: number; generation?: number },
): Identity => ({
  agentId: agent.id,
  name: agent.name,
  tier: agent.tier,
  allowlist: agent.allowlist,
  ...token,
});

/**
 * A token whose signature checked out: its claims, and the identity it last verified as, with the agent
 * object and registry version that identity was built from. Every check that can change (issuer, lifetime,
 * the agent's state, revocation, expiry) still runs on every verify; only the object is reused.
 */
interface SignedToken {
  readonly claims: TokenClaims;
  identity?: Identity;
  agent?: Agent;
  version?: number;
}

/** Why a token was refused; sent back in the 401 body as `reason` to help developers. */
export type InvalidTokenReason = (typeof INVALID_TOKEN_REASONS)[number];

/**
 * Every reason a token is refused: `wrong_issuer`, `issued_in_future` and `lifetime_exceeds_ttl` are tokens
 * signed with the right secret whose claims this provider would never have issued.
 */
export const INVALID_TOKEN_REASONS = [
  'malformed',
  'bad_signature',
  'wrong_issuer',
  'issued_in_future',
  'lifetime_exceeds_ttl',
  'expired',
  'unknown_agent',
  'agent_disabled',
  'revoked',
] as const;

/**
 * How far a token's issue time may lie ahead of the gateway clock: clocks of an identity provider and a
 * gateway drift a little (and QA may set the virtual clock back a moment). A year-9999 forgery does not.
 */
export const MAX_ISSUED_AT_SKEW_MS = 60_000;

/** A refused token still names its agent when it was genuinely signed (expired, revoked, disabled). */
export type VerifyResult =
  | { ok: true; identity: Identity }
  | { ok: false; reason: InvalidTokenReason; agentId?: string };

/** A freshly minted token, as the token endpoint returns it. */
export interface MintedToken {
  token: string;
  agentId: string;
  issuedAt: number;
  expiresAt: number;
}

/**
 * The simulated identity provider: exchanges API keys for short-lived signed tokens and verifies them
 * against the registry (so disabling an agent or revoking its tokens takes effect at once).
 *
 * @example
 * const idp = createIdentityProvider({ registry, clock, signingSecret: 's3cret-s3cret-s3cret', issuer: 'idp', ttlSeconds: 3600 });
 * const { token } = idp.mintForApiKey('ak_early_7c3e9a1b5d2f');
 * idp.verify(token); // { ok: true, identity: { agentId: 'agent-early', tier: 'early_access', ... } }
 */
export function createIdentityProvider(options: {
  registry: AgentRegistry;
  clock: Clock;
  signingSecret: string;
  issuer: string;
  ttlSeconds: number;
  /** Told whenever a token is signed, or accepted as signed, with the secret (a shared store's guard). */
  onSigned?: () => void;
}) {
  const { registry, clock } = options;
  const signed = options.onSigned ?? (() => {});
  let codec = createTokenCodec(options.signingSecret);
  let issuer = options.issuer;
  let ttlSeconds = options.ttlSeconds;
  // Checking the signature is a pure function of the token, so good tokens are remembered (bounded) and
  // the HMAC runs once per token, not once per request. Expiry, revocation and the agent's current state
  // are still checked on every call.
  // The identity a good token last verified as is kept beside its claims, with the agent object and the
  // registry version it was built from: a request reuses it while both are the same (an admin change bumps
  // the version, a replaced agent is another object), instead of building the same Identity again.
  let signedClaims = createTokenMemo<SignedToken>();
  const decode = (
    token: string,
  ): { ok: true; signed: SignedToken } | { ok: false; reason: DecodeFailure } => {
    const known = signedClaims.get(token);
    if (known) return { ok: true, signed: known };
    const decoded = codec.decode(token);
    if (!decoded.ok) return decoded;
    signed();
    return { ok: true, signed: signedClaims.set(token, { claims: decoded.claims }) };
  };
  const identityFor = (known: SignedToken, agent: Agent): Identity => {
    const cached = known.identity;
    if (cached && known.agent === agent && known.version === registry.version) return cached;
    const { claims } = known;
    const identity = identityOf(agent, {
      tokenId: claims.jti,
      issuedAt: claims.iat,
      expiresAt: claims.exp,
      generation: claims.gen,
    });
    known.identity = identity;
    known.agent = agent;
    known.version = registry.version;
    return identity;
  };

  const mint = (agent: Agent): MintedToken => {
    if (agent.disabled) {
      throw new GatewayError('agent_disabled', {
        message: `Agent ${agent.id} is disabled at the identity provider; it cannot obtain tokens.`,
      });
    }
    const issuedAt = clock.now();
    const expiresAt = issuedAt + ttlSeconds * 1000;
    signed();
    const token = codec.encode({
      sub: agent.id,
      jti: randomUUID(),
      iss: issuer,
      iat: issuedAt,
      exp: expiresAt,
      gen: agent.tokenGeneration,
      inc: agent.incarnation,
    });
    return { token, agentId: agent.id, issuedAt, expiresAt };
  };

  return {
    /** Exchanges an API key for a token; unknown keys get 401 invalid_api_key, disabled agents 403. */
    mintForApiKey(apiKey: string): MintedToken {
      const agent = registry.findByApiKey(apiKey);
      if (!agent) throw new GatewayError('invalid_api_key');
      return mint(agent);
    },

    /** Mints for an agent id: used by the CLI's `token` command and tests, never exposed over HTTP. */
    mintForAgent(agentId: string): MintedToken {
      const agent = registry.get(agentId);
      if (!agent) throw new GatewayError('invalid_api_key', { message: `No agent with id "${agentId}".` });
      return mint(agent);
    },

    verify(token: string): VerifyResult {
      const decoded = decode(token);
      if (!decoded.ok) return decoded;
      const { claims } = decoded.signed;
      if (claims.iss !== issuer) return { ok: false, reason: 'wrong_issuer' };
      // Signed with our secret but never issued like this: whoever holds the secret cannot stretch a token
      // past the configured lifetime, nor date it ahead to outlive it.
      const now = clock.now();
      if (claims.iat > now + MAX_ISSUED_AT_SKEW_MS)
        return { ok: false, reason: 'issued_in_future', agentId: claims.sub };
      if (claims.exp - claims.iat > ttlSeconds * 1000)
        return { ok: false, reason: 'lifetime_exceeds_ttl', agentId: claims.sub };
      const agent = registry.get(claims.sub);
      if (!agent) return { ok: false, reason: 'unknown_agent', agentId: claims.sub };
      if (agent.disabled) return { ok: false, reason: 'agent_disabled', agentId: agent.id };
      if (claims.gen !== agent.tokenGeneration) return { ok: false, reason: 'revoked', agentId: agent.id };
      // Minted for an earlier agent with this id, deleted since: its tokens ended with it.
      if ((claims.inc ?? 'c0') !== agent.incarnation)
        return { ok: false, reason: 'revoked', agentId: agent.id };
      if (now >= claims.exp) return { ok: false, reason: 'expired', agentId: agent.id };
      return { ok: true, identity: identityFor(decoded.signed, agent) };
    },

    get ttlSeconds() {
      return ttlSeconds;
    },
    /** Changes the signing secret, issuer and lifetime; tokens signed with an old secret stop verifying. */
    configure(next: { signingSecret: string; issuer: string; ttlSeconds: number }) {
      codec = createTokenCodec(next.signingSecret);
      signedClaims = createTokenMemo();
      issuer = next.issuer;
      ttlSeconds = next.ttlSeconds;
    },
  };
}

export type IdentityProvider = ReturnType<typeof createIdentityProvider>;
