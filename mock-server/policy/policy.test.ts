import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../errors.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { createPolicy, type ToolSettings } from './policy.ts';

const tools = (): ToolSettings => ({
  'web.search': { tiers: ['verified'], enabled: true, latency_ms: 0 },
  'web.fetch': { tiers: ['early_access', 'verified'], enabled: true, latency_ms: 0 },
});
const identity = (tier: string, allowlist: Identity['allowlist'] = []): Identity => ({
  agentId: `agent-${tier}`,
  name: tier,
  tier,
  allowlist,
  tokenId: 't',
  issuedAt: 0,
  expiresAt: 1,
});
const denial = (fn: () => void): GatewayError => {
  try {
    fn();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected access_denied');
};

describe('policy', () => {
  it('allows tools by tier, and adds allowlisted tools on top', () => {
    const policy = createPolicy(tools());
    expect(policy.allowedTools(identity('none'))).toEqual([]);
    expect(policy.allowedTools(identity('early_access'))).toEqual(['web.fetch']);
    expect(policy.allowedTools(identity('verified'))).toEqual(['web.search', 'web.fetch']);
    expect(policy.allowedTools(identity('early_access', ['web.search']))).toEqual([
      'web.search',
      'web.fetch',
    ]);
  });

  it('denies with 403 access_denied whose message names the remedy', () => {
    const error = denial(() => createPolicy(tools()).authorize(identity('early_access'), 'web.search'));
    expect(error.status).toBe(403);
    expect(error.code).toBe('access_denied');
    expect(error.message).toMatch(/verified tier/);
    expect(error.message).toMatch(/request early access or verification/i);
    expect(error.details).toMatchObject({ tool: 'web.search', tier: 'early_access', reason: 'tier' });
  });

  it('a globally disabled tool is denied to everyone, allowlist included, and sees changes at run time', () => {
    const policy = createPolicy(tools());
    policy.updateTool('web.search', { enabled: false });
    const error = denial(() => policy.authorize(identity('verified', ['web.search']), 'web.search'));
    expect(error.details.reason).toBe('tool_disabled');
    expect(policy.allowedTools(identity('verified'))).toEqual(['web.fetch']);
  });

  it('configure replaces the settings; the caller keeps no handle on them', () => {
    const settings = tools();
    const policy = createPolicy(settings);
    (settings['web.fetch'] as { enabled: boolean }).enabled = false;
    expect(policy.allowedTools(identity('early_access'))).toEqual(['web.fetch']);
    policy.configure({ ...tools(), 'web.fetch': { tiers: [], enabled: true, latency_ms: 0 } });
    expect(policy.allowedTools(identity('early_access'))).toEqual([]);
  });

  it('an unknown tier (e.g. from a remote identity provider) gets no tools', () => {
    expect(createPolicy(tools()).allowedTools(identity('platinum'))).toEqual([]);
  });
});
