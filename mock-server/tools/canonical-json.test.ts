import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson', () => {
  it('orders keys at every depth and drops spacing', () => {
    expect(canonicalJson(JSON.parse('{ "b": 1, "a": [ { "d": 2, "c": 3 } ] }'))).toBe(
      '{"a":[{"c":3,"d":2}],"b":1}',
    );
  });

  it('tells different data apart and keeps array order', () => {
    expect(canonicalJson({ url: 'https://a.example/' })).not.toBe(
      canonicalJson({ url: 'https://b.example/' }),
    );
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: null, b: 'x"y' })).toBe('{"a":null,"b":"x\\"y"}');
  });
});
