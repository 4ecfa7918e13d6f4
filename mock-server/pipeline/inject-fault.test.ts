import { describe, expect, it } from 'vitest';
import { stageContext, stageWorld, thrown } from '../../test/support/stage-context.ts';
import type { Fault } from '../scenarios/faults.ts';
import type { FaultsPort } from '../store/state-port.ts';
import { injectFault } from './inject-fault.ts';

describe('inject-fault stage', () => {
  it('does nothing, without a promise, when no fault is armed', () => {
    const world = stageWorld();
    const ctx = stageContext(world);
    expect(injectFault(world, ctx, 'web.search', 'agent-a')).toBeUndefined();
    expect(ctx.note.fault).toBeUndefined();
  });

  it('answers a status fault with its 5xx and a Retry-After dated on the gateway clock, count times', async () => {
    const world = stageWorld();
    const deps = { config: world.config, state: world.state };
    world.parts.faults.add({
      match: { operation: 'web.search' },
      kind: 'status',
      status: 503,
      retry_after: 7,
      delay_ms: 0,
      count: 1,
      every: 1,
    });
    // Another target is not matched.
    expect(injectFault(deps, stageContext(world), 'whoami', 'agent-a')).toBeUndefined();
    const ctx = stageContext(world);
    const fault = await thrown(() => injectFault(deps, ctx, 'web.search', 'agent-a'));
    expect(fault.code).toBe('upstream_unavailable');
    expect(fault.status).toBe(503);
    expect(fault.headers).toMatchObject({
      'retry-after': '7',
      date: new Date(world.clock.now()).toUTCString(),
    });
    expect(ctx.note).toMatchObject({ fault: 'fault-1', retry_after: '7', retry_after_ms: 7000 });
    // Spent after one strike.
    expect(injectFault(deps, stageContext(world), 'web.search', 'agent-a')).toBeUndefined();
  });

  it('strikes every n-th matching request of the named agent only, and a drop fault drops', () => {
    const world = stageWorld();
    world.parts.faults.add({
      match: { agent: 'agent-b' },
      kind: 'drop',
      status: 503,
      delay_ms: 0,
      every: 2,
    });
    const outcomes = [1, 2, 3].map(() => injectFault(world, stageContext(world), 'web.fetch', 'agent-b'));
    expect(outcomes.map((o) => o && 'drop' in o && o.drop)).toEqual([true, undefined, true]);
    expect(injectFault(world, stageContext(world), 'web.fetch', 'agent-a')).toBeUndefined();
  });

  it('waits for a port that strikes asynchronously (a shared store) and answers what struck', async () => {
    const world = stageWorld();
    const fault: Fault = {
      id: 'fault-9',
      match: {},
      kind: 'status',
      status: 502,
      delay_ms: 0,
      every: 1,
      count: 1,
      seen: 1,
      fired: 1,
    };
    const faults: FaultsPort = { strike: async () => fault };
    const pending = injectFault(
      { config: world.config, state: { clock: world.clock, faults } },
      stageContext(world),
      'health',
      undefined,
    );
    expect(pending).toBeInstanceOf(Promise);
    const refused = await thrown(() => pending);
    expect(refused.code).toBe('upstream_error');
    expect(refused.message).toContain('fault-9');
  });
});
