import { describe, expect, it } from 'vitest';
import { createBoundedMap } from './bounded-map.ts';
import { createTokenMemo } from './identity/token-memo.ts';

describe('bounded map', () => {
  it('keeps at most max entries, dropping the oldest insertion', () => {
    const map = createBoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3); // re-inserting refreshes its age
    map.set('c', 4);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c')]).toEqual([3, 4]);
  });

  it('a token memo answers only for the very token it stored, not another with the same signature', () => {
    const memo = createTokenMemo<number>(2);
    const signature = 'S'.repeat(43);
    memo.set(`a.${signature}`, 1);
    expect(memo.get(`a.${signature}`)).toBe(1);
    expect(memo.get(`b.${signature}`)).toBeUndefined();
    memo.set('x'.repeat(50), 2);
    memo.set('y'.repeat(50), 3);
    expect(memo.get(`a.${signature}`)).toBeUndefined();
  });

  it('refuses a non-positive bound', () => {
    expect(() => createBoundedMap(0)).toThrow(RangeError);
  });
});
