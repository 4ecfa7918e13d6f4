import { describe, expect, it } from 'vitest';
import { codeOf } from '../../test/support/gateway-error.ts';
import { createClock } from '../clock.ts';
import { GatewayError } from '../errors.ts';
import { createAgentRegistry } from './agent-registry.ts';
import { createIdentityProvider, MAX_ISSUED_AT_SKEW_MS } from './identity-provider.ts';
import { createTokenCodec, type TokenClaims } from './token-codec.ts';

/** The configured early-access agent most tests mint for. */
const EARLY_AGENT = {
  id: 'a-early',
  name: 'Early',
  api_key: 'key-early-123',
  tier: 'early_access',
  allowlist: [],
  disabled: false,
};

const setup = (ttlSeconds = 60) => {
  const clock = createClock({ frozen: true, startAt: Date.parse('2026-01-01T00:00:00Z') });
  const registry = createAgentRegistry([
    EARLY_AGENT,
    { id: 'a-off', name: 'Off', api_key: 'key-off-12345', tier: 'verified', allowlist: [], disabled: true },
  ]);
  const idp = createIdentityProvider({
    registry,
    clock,
    signingSecret: 'secret-secret-secret',
    issuer: 'idp',
    ttlSeconds,
  });
  return { clock, registry, idp };
};

describe('identity provider', () => {
  it('mints a token for an API key that verifies to the agent, with its tier and expiry', () => {
    const { idp, clock } = setup(60);
    const minted = idp.mintForApiKey('key-early-123');
    expect(minted.expiresAt - minted.issuedAt).toBe(60_000);
    const result = idp.verify(minted.token);
    expect(result).toMatchObject({
      ok: true,
      identity: { agentId: 'a-early', tier: 'early_access', expiresAt: clock.now() + 60_000 },
    });
  });

  it('refuses unknown API keys (401) and disabled agents (403)', () => {
    const { idp } = setup();
    expect(codeOf(() => idp.mintForApiKey('nope-nope-nope'))).toBe('invalid_api_key');
    expect(codeOf(() => idp.mintForApiKey('key-off-12345'))).toBe('agent_disabled');
    expect(new GatewayError('agent_disabled').status).toBe(403);
  });

  it('expires tokens exactly at their expiry on the gateway clock', () => {
    const { idp, clock } = setup(10);
    const { token } = idp.mintForApiKey('key-early-123');
    clock.advance(9_999);
    expect(idp.verify(token).ok).toBe(true);
    clock.advance(1);
    expect(idp.verify(token)).toEqual({ ok: false, reason: 'expired', agentId: 'a-early' });
  });

  it('revokes every token of an agent that is disabled or whose tokens are revoked, even on a frozen clock', () => {
    const { idp, registry } = setup();
    const first = idp.mintForApiKey('key-early-123').token;
    registry.revokeTokens('a-early');
    expect(idp.verify(first)).toEqual({ ok: false, reason: 'revoked', agentId: 'a-early' });
    const second = idp.mintForApiKey('key-early-123').token;
    expect(idp.verify(second).ok).toBe(true);
    registry.update('a-early', { disabled: true });
    expect(idp.verify(second)).toEqual({ ok: false, reason: 'agent_disabled', agentId: 'a-early' });
  });

  it('keeps revocations through a reset or a new agent list: a revoked token never comes back', () => {
    const { idp, registry } = setup();
    const revoked = idp.mintForApiKey('key-early-123').token;
    registry.revokeTokens('a-early');
    const fresh = idp.mintForApiKey('key-early-123').token;
    registry.reset();
    expect(idp.verify(revoked)).toEqual({ ok: false, reason: 'revoked', agentId: 'a-early' });
    expect(idp.verify(fresh).ok).toBe(true);
    registry.replace([]);
    registry.add({
      id: 'a-early',
      name: 'Again',
      apiKey: 'key-again-123',
      tier: 'verified',
      allowlist: [],
      disabled: false,
    });
    expect(idp.verify(revoked)).toEqual({ ok: false, reason: 'revoked', agentId: 'a-early' });
    // Another agent with the id: the tokens of the deleted one ended with it.
    expect(idp.verify(fresh)).toEqual({ ok: false, reason: 'revoked', agentId: 'a-early' });
  });

  it('sees tier changes at once, because verification reads the registry', () => {
    const { idp, registry } = setup();
    const { token } = idp.mintForApiKey('key-early-123');
    registry.update('a-early', { tier: 'verified', allowlist: ['web.search'] });
    expect(idp.verify(token)).toMatchObject({
      ok: true,
      identity: { tier: 'verified', allowlist: ['web.search'] },
    });
  });

  it('builds the identity of a token once, and again after any change to its agent; a revocation, a disabled agent or the expiry after it still refuses at once', () => {
    const { idp, registry, clock } = setup(10);
    const { token } = idp.mintForApiKey('key-early-123');
    const identityNow = () => {
      const result = idp.verify(token);
      if (!result.ok) throw new Error(`refused: ${result.reason}`);
      return result.identity;
    };
    const first = identityNow();
    expect(identityNow()).toBe(first);
    registry.update('a-early', { name: 'Renamed', tier: 'verified', allowlist: ['web.search'] });
    const updated = identityNow();
    expect(updated).not.toBe(first);
    expect(updated).toMatchObject({ name: 'Renamed', tier: 'verified', allowlist: ['web.search'] });
    expect(first).toMatchObject({ name: 'Early', tier: 'early_access', allowlist: [] });
    // Another instance's agents taken over (a shared store): new agent objects, a new identity.
    registry.restore(registry.list().map((agent) => ({ ...agent, name: 'Restored' })));
    expect(identityNow()).toMatchObject({ name: 'Restored' });
    clock.advance(9_999);
    expect(identityNow().name).toBe('Restored');
    clock.advance(1);
    expect(idp.verify(token)).toEqual({ ok: false, reason: 'expired', agentId: 'a-early' });
    const fresh = idp.mintForApiKey('key-early-123').token;
    expect(idp.verify(fresh).ok).toBe(true);
    registry.revokeTokens('a-early');
    expect(idp.verify(fresh)).toEqual({ ok: false, reason: 'revoked', agentId: 'a-early' });
    const after = idp.mintForApiKey('key-early-123').token;
    expect(idp.verify(after).ok).toBe(true);
    registry.update('a-early', { disabled: true });
    expect(idp.verify(after)).toEqual({ ok: false, reason: 'agent_disabled', agentId: 'a-early' });
  });

  describe('a token signed with the right secret but never issued like this is refused, saying why', () => {
    // What someone holding the signing secret could mint: claims of their choosing, correctly signed.
    const forge = (clock: { now(): number }, claims: Partial<TokenClaims>) =>
      createTokenCodec('secret-secret-secret').encode({
        sub: 'a-early',
        jti: 'forged',
        iss: 'idp',
        iat: clock.now(),
        exp: clock.now() + 60_000,
        gen: 0,
        ...claims,
      });

    it('a genuine lifetime and issue time pass (the forgery helper mints what the provider would)', () => {
      const { idp, clock } = setup(60);
      expect(idp.verify(forge(clock, {})).ok).toBe(true);
    });

    it('another issuer is wrong_issuer, not bad_signature', () => {
      const { idp, clock } = setup(60);
      expect(idp.verify(forge(clock, { iss: 'another-idp' }))).toEqual({ ok: false, reason: 'wrong_issuer' });
    });

    it('a lifetime (exp - iat) beyond token_ttl_seconds is lifetime_exceeds_ttl, even for a year-9999 expiry', () => {
      const { idp, clock } = setup(60);
      const now = clock.now();
      const refused = { ok: false, reason: 'lifetime_exceeds_ttl', agentId: 'a-early' };
      expect(idp.verify(forge(clock, { exp: now + 60_001 }))).toEqual(refused);
      expect(idp.verify(forge(clock, { exp: Date.UTC(9999, 11, 31) }))).toEqual(refused);
      expect(idp.verify(forge(clock, { iat: now - 3_600_000, exp: now + 1000 }))).toEqual(refused);
    });

    it('an issue time ahead of the gateway clock by more than the skew is issued_in_future', () => {
      const { idp, clock } = setup(60);
      const now = clock.now();
      const at = (iat: number) => idp.verify(forge(clock, { iat, exp: iat + 60_000 }));
      expect(at(now + MAX_ISSUED_AT_SKEW_MS).ok).toBe(true);
      expect(at(now + MAX_ISSUED_AT_SKEW_MS + 1)).toEqual({
        ok: false,
        reason: 'issued_in_future',
        agentId: 'a-early',
      });
      expect(at(Date.UTC(9999, 0, 1))).toMatchObject({ reason: 'issued_in_future' });
    });
  });

  it('applies a new TTL to tokens minted afterwards', () => {
    const { idp } = setup(60);
    idp.configure({ signingSecret: 'secret-secret-secret', issuer: 'idp', ttlSeconds: 2 });
    const minted = idp.mintForApiKey('key-early-123');
    expect(minted.expiresAt - minted.issuedAt).toBe(2_000);
  });
});

describe('tokens are bound to one life of an agent', () => {
  const EARLY = [EARLY_AGENT];
  const added = {
    id: 'a-new',
    name: 'New',
    apiKey: 'key-new-1234567',
    tier: 'verified',
    allowlist: [],
    disabled: false,
  };
  const reasonOf = (idp: ReturnType<typeof setup>['idp'], token: string) => {
    const result = idp.verify(token);
    return result.ok ? 'ok' : result.reason;
  };

  it('an agent created through the admin API, deleted (reset) and created again with the same id: the old tokens stay dead', () => {
    const { registry, idp } = setup();
    registry.add(added);
    const old = idp.mintForAgent('a-new').token;
    expect(reasonOf(idp, old)).toBe('ok');
    registry.reset();
    expect(reasonOf(idp, old)).toBe('unknown_agent');
    registry.add(added);
    expect(reasonOf(idp, old)).toBe('revoked');
    expect(reasonOf(idp, idp.mintForAgent('a-new').token)).toBe('ok');
  });

  it('a configured agent a scenario removed comes back with a reset: its earlier tokens stay dead, as does every earlier life', () => {
    const { registry, idp } = setup();
    const first = idp.mintForAgent('a-early').token;
    registry.replace([]);
    registry.replace([{ ...EARLY_AGENT }]);
    expect(reasonOf(idp, first)).toBe('revoked');
    const second = idp.mintForAgent('a-early').token;
    expect(reasonOf(idp, second)).toBe('ok');
    registry.replace([]);
    registry.replace(EARLY);
    expect(reasonOf(idp, second)).toBe('revoked');
    expect(reasonOf(idp, first)).toBe('revoked');
  });

  it('a reset that keeps the agent keeps its tokens; two processes with one config accept each other’s tokens', () => {
    const a = setup();
    const b = setup();
    const token = a.idp.mintForAgent('a-early').token;
    a.registry.reset();
    expect(reasonOf(a.idp, token)).toBe('ok');
    expect(reasonOf(b.idp, token)).toBe('ok');
  });

  it('an instance taking over another’s agents (shared store) takes their lives too, and counts on from them', () => {
    const a = setup();
    const b = setup();
    a.registry.replace([]);
    a.registry.replace(EARLY);
    a.registry.add(added);
    const revived = a.idp.mintForAgent('a-early').token;
    const created = a.idp.mintForAgent('a-new').token;
    b.registry.restore(a.registry.list());
    expect(reasonOf(b.idp, revived)).toBe('ok');
    expect(reasonOf(b.idp, created)).toBe('ok');
    // b removes and restores it itself: a life after the one it took over.
    b.registry.replace([]);
    b.registry.replace(EARLY);
    expect(b.registry.get('a-early')?.incarnation).toBe('c2');
    expect(reasonOf(b.idp, revived)).toBe('revoked');
  });

  it('a token of a configured agent minted without an incarnation (an older gateway) counts as its first life', () => {
    const { idp, clock } = setup();
    const codec = createTokenCodec('secret-secret-secret');
    const claims: TokenClaims = {
      sub: 'a-early',
      jti: 'j',
      iss: 'idp',
      iat: clock.now(),
      exp: clock.now() + 1000,
      gen: 0,
    };
    expect(reasonOf(idp, codec.encode(claims))).toBe('ok');
    expect(reasonOf(idp, codec.encode({ ...claims, inc: 'c1' }))).toBe('revoked');
  });
});
