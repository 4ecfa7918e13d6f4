import { execFileSync } from 'node:child_process';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { applyTransform, shellExpression, shellQuote } from './token-value.ts';

const tokenArb = fc.stringMatching(/^[A-Za-z0-9_.-]{3,80}$/);
const bash = (script: string, env: Record<string, string> = {}) =>
  execFileSync('bash', ['-c', script], { env: { ...process.env, ...env }, encoding: 'latin1' });

describe('token transforms', () => {
  test.prop([tokenArb, fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...'aAzZ09_-'.split(''))])(
    'a replacement changes exactly one character, never the last, and not just its case',
    (token, at, char) => {
      const { value, resolved } = applyTransform(token, { op: 'replace', at, char });
      expect(value).toHaveLength(token.length);
      const changed = [...value].map((c, i) => (c !== token[i] ? i : -1)).filter((i) => i >= 0);
      expect(changed).toHaveLength(1);
      const index = changed[0] as number;
      expect(index).toBeLessThan(token.length - 1);
      expect(value[index]?.toLowerCase()).not.toBe(token[index]?.toLowerCase());
      expect(resolved).toEqual({ op: 'replace', index, char: value[index] });
    },
  );

  test.prop([tokenArb, fc.double({ min: 0, max: 1, noNaN: true })])(
    'a truncation keeps a non-empty proper prefix',
    (token, keep) => {
      const { value } = applyTransform(token, { op: 'truncate', keep });
      expect(value.length).toBeGreaterThanOrEqual(1);
      expect(value.length).toBeLessThan(token.length);
      expect(token.startsWith(value)).toBe(true);
    },
  );

  test.prop(
    [
      tokenArb,
      fc.oneof(
        fc.record({
          op: fc.constant('replace' as const),
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          char: fc.constantFrom('x', 'Q', '7'),
        }),
        fc.record({ op: fc.constant('truncate' as const), keep: fc.double({ min: 0, max: 1, noNaN: true }) }),
        fc.record({
          op: fc.constant('append' as const),
          suffix: fc.stringMatching(/^[A-Za-z0-9'" $]{1,8}$/),
        }),
        fc.constant({ op: 'none' as const }),
      ),
    ],
    { numRuns: 25 },
  )('the shell expression rebuilds the altered token from $TOKEN, exactly', (token, transform) => {
    const { value, resolved } = applyTransform(token, transform);
    expect(bash(`printf %s ${shellExpression('$TOKEN', resolved)}`, { TOKEN: token })).toBe(value);
  });

  it('shellQuote round-trips printable text, quotes and raw bytes through bash', () => {
    for (const text of ["it's", 'a "b" $c `d`', 'caf\u00c3\u00a9 \u00f0\u009f\u00a4\u0096', '\\x41']) {
      expect(bash(`printf %s ${shellQuote(text)}`)).toBe(text);
    }
  });
});
