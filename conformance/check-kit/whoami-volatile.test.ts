import { describe, expect, it } from 'vitest';
import { differingPaths, jsonLeaves, tellsCallersApart } from './whoami-volatile.ts';

describe('telling whoami callers apart', () => {
  it('leaves are addressed by path, empty containers included', () => {
    expect([...jsonLeaves({ a: { b: 1, c: [] }, d: ['x'] }).entries()]).toEqual([
      ['$.a.b', '1'],
      ['$.a.c', '[]'],
      ['$.d[0]', '"x"'],
    ]);
    expect(differingPaths({ a: 1, b: 2 }, { a: 1, c: 2 })).toEqual(new Set(['$.b', '$.c']));
  });

  it('two callers differ in their identity: the reference shape and another one', () => {
    const reference = (id: string, tier: string, at: string) => ({
      agent: { id },
      tier,
      token: { issued_at: at, expires_in_seconds: 3599 },
    });
    expect(
      tellsCallersApart(
        reference('agent-verified', 'verified', 't1'),
        reference('agent-verified', 'verified', 't1'),
        reference('agent-early', 'early_access', 't2'),
      ),
    ).toBe(true);
    expect(
      tellsCallersApart(
        { subject: 'a', policy: { tier: 'verified' } },
        { subject: 'a', policy: { tier: 'verified' } },
        { subject: 'b', policy: { tier: 'early_access' } },
      ),
    ).toBe(true);
  });

  it('fields that change from call to call do not make two callers look different', () => {
    const body = (requestId: string, time: number) => ({ authenticated: true, request_id: requestId, time });
    // valid at 1, denied at 2, valid again at 3: time and request_id are volatile.
    expect(tellsCallersApart(body('r1', 1), body('r3', 3), body('r2', 2))).toBe(false);
    expect(tellsCallersApart({ request_id: 'r1' }, { request_id: 'r3' }, { request_id: 'r2' })).toBe(false);
  });
});
