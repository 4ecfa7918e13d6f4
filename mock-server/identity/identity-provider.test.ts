import { describe, expect, it } from 'vitest';
import { createClock } from '../clock.ts';
import { GatewayError } from '../errors.ts';
import { createAgentRegistry } from './agent-registry.ts';
import { createIdentityProvider } from './identity-provider.ts';

const setup = (ttlSeconds = 60) => {
  const clock = createClock({ frozen: true, startAt: Date.parse('2026-01-01T00:00:00Z') });
  const registry = createAgentRegistry([
    {
      id: 'a-early',
      name: 'Early',
      api_key: 'key-early-123',
      tier: 'early_access',
      allowlist: [],
      disabled: false,
    },
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
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as GatewayError).code;
  }
  return 'no error';
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
    expect(idp.verify(fresh).ok).toBe(true);
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

  it('applies a new TTL to tokens minted afterwards', () => {
    const { idp } = setup(60);
    idp.configure({ signingSecret: 'secret-secret-secret', issuer: 'idp', ttlSeconds: 2 });
    const minted = idp.mintForApiKey('key-early-123');
    expect(minted.expiresAt - minted.issuedAt).toBe(2_000);
  });
});
