import { describe, expect, it } from 'vitest';
import { createFaultInjector, faultSpecSchema } from './faults.ts';

const spec = (input: Record<string, unknown>) => faultSpecSchema.parse(input);

describe('fault injector', () => {
  it('strikes the next `count` matching requests, then is spent', () => {
    const faults = createFaultInjector();
    faults.add(spec({ kind: 'status', count: 2, match: { operation: 'web.search' } }));
    expect(faults.strike('web.fetch')).toBeUndefined();
    expect(faults.strike('web.search')?.status).toBe(503);
    expect(faults.strike('web.search')).toBeDefined();
    expect(faults.strike('web.search')).toBeUndefined();
    expect(faults.list()).toHaveLength(0);
  });

  it('`every` strikes the 1st matching request and then every n-th, forever without count', () => {
    const faults = createFaultInjector();
    faults.add(spec({ kind: 'drop', every: 3 }));
    const pattern = Array.from({ length: 7 }, () => (faults.strike('whoami', 'a') ? 'x' : '.')).join('');
    expect(pattern).toBe('x..x..x');
  });

  it('matches an agent, and never health (which has no agent) for agent faults', () => {
    const faults = createFaultInjector();
    faults.add(spec({ kind: 'status', status: 500, count: 5, match: { agent: 'agent-early' } }));
    expect(faults.strike('health')).toBeUndefined();
    expect(faults.strike('whoami', 'agent-verified')).toBeUndefined();
    expect(faults.strike('whoami', 'agent-early')?.status).toBe(500);
  });

  it('remove and clear disarm faults', () => {
    const faults = createFaultInjector();
    const a = faults.add(spec({ kind: 'delay', delay_ms: 10 }));
    faults.add(spec({ kind: 'drop', count: 1 }));
    expect(faults.remove(a.id)).toBe(true);
    expect(faults.remove(a.id)).toBe(false);
    faults.clear();
    expect(faults.list()).toEqual([]);
  });

  it('the schema refuses faults that would break every request forever, and bad statuses', () => {
    expect(faultSpecSchema.safeParse({ kind: 'status' }).success).toBe(false);
    expect(faultSpecSchema.safeParse({ kind: 'drop' }).success).toBe(false);
    expect(faultSpecSchema.safeParse({ kind: 'status', status: 404, count: 1 }).success).toBe(false);
    expect(faultSpecSchema.safeParse({ kind: 'delay' }).success).toBe(true);
  });
});
