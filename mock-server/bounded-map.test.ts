import { describe, expect, it } from 'vitest';
import { createBoundedMap } from './bounded-map.ts';

describe('bounded map', () => {
  it('keeps at most max entries, dropping the oldest insertion', () => {
    const map = createBoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3); // re-inserting refreshes its age
    map.set('c', 4);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBeUndefined();
    expect([...map.values()]).toEqual([3, 4]);
  });

  it('refuses a non-positive bound', () => {
    expect(() => createBoundedMap(0)).toThrow(RangeError);
  });
});
