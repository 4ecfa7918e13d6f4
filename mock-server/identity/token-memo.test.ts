import { describe, expect, it } from 'vitest';
import { createTokenMemo } from './token-memo.ts';

describe('token memo', () => {
  const token = `eyJhbGciOiJIUzI1NiJ9.${'x'.repeat(150)}.${'s'.repeat(43)}`;

  it('gives back the one remembered copy of a token, and any other string as it is', () => {
    const memo = createTokenMemo<number>();
    memo.set(token, 1);
    // A new string with the same characters (as each request's header is) maps to the remembered one.
    const again = [...token].join('');
    expect(memo.shared(again)).toBe(token);
    expect(memo.get(again)).toBe(1);
    // Same signature, different token: not confused with the remembered one.
    const other = `eyJhbGciOiJIUzI1NiJ9.${'y'.repeat(150)}.${'s'.repeat(43)}`;
    expect(memo.shared(other)).toBe(other);
    expect(memo.get(other)).toBeUndefined();
  });
});
