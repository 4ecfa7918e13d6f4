import { describe, expect, it } from 'vitest';
import { identityOf, stageContext, stageWorld, thrown } from '../../test/support/stage-context.ts';
import type { GatewayConfigOverlay } from '../config/schema.ts';
import type { LimitDecision, StatePort } from '../store/state-port.ts';
import { type Admission, admit } from './admit.ts';

const twoPerMinute: GatewayConfigOverlay = {
  rate_limits: {
    rules: [{ name: 'per-agent', scope: 'agent', algorithm: 'fixed_window', limit: 2, window_seconds: 60 }],
  },
};

describe('admit stage (spec sections 7 and 8)', () => {
  it('admits up to the limit without a promise, with RateLimit headers, then refuses with a truthful Retry-After', async () => {
    const world = stageWorld(twoPerMinute);
    const deps = { config: world.config, state: world.state, verifier: {} };
    const agent = identityOf('agent-a');
    const first = admit(deps, stageContext(world), agent, 'web.search');
    expect(first).not.toBeInstanceOf(Promise);
    expect((first as Admission).headers).toEqual({
      'ratelimit-policy': '"per-agent";q=2;w=60',
      ratelimit: '"per-agent";r=1;t=60',
    });
    admit(deps, stageContext(world), agent, 'web.search');
    const ctx = stageContext(world);
    const refused = await thrown(() => admit(deps, ctx, agent, 'web.search'));
    expect(refused.code).toBe('rate_limited');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.details).toMatchObject({ reason: 'rate', rule: 'per-agent', retry_after_seconds: 60 });
    expect(ctx.note).toMatchObject({
      limit: { rule: 'per-agent', scope: 'agent', key: 'agent-a' },
      retry_after: '60',
      retry_after_ms: 60_000,
    });
    // Truthful: once the Retry-After has elapsed on the clock, the next request is admitted.
    world.clock.advance(60_000);
    expect(admit(deps, stageContext(world), agent, 'web.search')).toHaveProperty('headers');
  });

  it('counts agents apart and leaves the in-flight count where it was for a refused request', async () => {
    const world = stageWorld(twoPerMinute);
    const deps = { config: world.config, state: world.state, verifier: {} };
    for (let i = 0; i < 2; i++) admit(deps, stageContext(world), identityOf('agent-a'), 'whoami');
    await thrown(() => admit(deps, stageContext(world), identityOf('agent-a'), 'whoami'));
    expect(world.parts.concurrency.current('agent-a')).toBe(2);
    expect(admit(deps, stageContext(world), identityOf('agent-b'), 'whoami')).toHaveProperty('headers');
  });

  it('holds the concurrency limit: the next request is 429 without Retry-After until one is released', async () => {
    const world = stageWorld({ rate_limits: { rules: [], concurrency: { per_agent: 1 } } });
    const deps = { config: world.config, state: world.state, verifier: {} };
    const agent = identityOf('agent-a');
    const ctx = stageContext(world);
    const held = admit(deps, ctx, agent, 'web.fetch') as Admission;
    expect(ctx.note.in_flight).toBe(1);
    // No rule applies: no RateLimit headers.
    expect(held.headers).toEqual({});
    const over = stageContext(world);
    const refused = await thrown(() => admit(deps, over, agent, 'web.fetch'));
    expect(refused.code).toBe('rate_limited');
    expect(refused.details).toEqual({ reason: 'concurrency', in_flight: 1, limit: 1 });
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(over.note.limit).toEqual({ rule: 'concurrency', scope: 'agent', key: 'agent-a' });
    held.release();
    expect(world.parts.concurrency.current('agent-a')).toBe(0);
    expect(admit(deps, stageContext(world), agent, 'web.fetch')).toHaveProperty('release');
  });

  it('answers the port asynchronously when the port does, and a revoked token is 401 naming the reason', async () => {
    const world = stageWorld();
    const decisions: LimitDecision[] = [{ kind: 'revoked' }];
    const state: Pick<StatePort, 'limits' | 'clock'> = {
      clock: world.clock,
      limits: { admit: async () => decisions.shift() as LimitDecision },
    };
    const deps = { config: world.config, state, verifier: { idpBaseUrl: 'https://idp.example/' } };
    const ctx = stageContext(world);
    const pending = admit(deps, ctx, identityOf('agent-a'), 'whoami');
    expect(pending).toBeInstanceOf(Promise);
    const refused = await thrown(() => pending);
    expect(refused.code).toBe('invalid_identity_token');
    expect(refused.details.reason).toBe('revoked');
    expect(String(refused.details.token_instructions)).toMatch(/^https:\/\/idp\.example\/idp\/auth\.md\?/);
    expect(ctx.note.agent).toBe('agent-a');
  });

  it('gives back exactly the slot the port handed out', async () => {
    const world = stageWorld();
    const released: string[] = [];
    const state: Pick<StatePort, 'limits' | 'clock'> = {
      clock: world.clock,
      limits: {
        admit: () => ({
          kind: 'decided',
          result: { allowed: true, outcomes: [] },
          inFlight: 3,
          release: () => released.push('lease-1'),
        }),
      },
    };
    const ctx = stageContext(world);
    const admitted = admit({ config: world.config, state, verifier: {} }, ctx, identityOf('a'), 'whoami');
    expect(ctx.note.in_flight).toBe(3);
    (admitted as Admission).release();
    expect(released).toEqual(['lease-1']);
  });
});
