import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { applyTransform, BASE64URL_ALPHABET, shellExpression, shellQuote } from './token-value.ts';

const tokenArb = fc.stringMatching(/^[A-Za-z0-9_.-]{3,80}$/);
/** JWT-like: base64url segments of random bytes, joined by dots. */
const base64urlArb = fc
  .array(fc.uint8Array({ minLength: 1, maxLength: 48 }), { minLength: 1, maxLength: 3 })
  .map((segments) => segments.map((bytes) => Buffer.from(bytes).toString('base64url')).join('.'))
  .filter((t) => t.length >= 3);
const hexArb = fc.stringMatching(/^[0-9a-f]{8,64}$/);
const bash = (script: string, env: Record<string, string> = {}) =>
  execFileSync('bash', ['-c', script], { env: { ...process.env, ...env }, encoding: 'latin1' });

describe('token transforms', () => {
  test.prop([tokenArb, fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...'aAzZ09_-'.split(''))])(
    'a replacement changes exactly one character, and not just its case',
    (token, at, char) => {
      const { value, resolved } = applyTransform(token, { op: 'replace', at, char });
      expect(value).toHaveLength(token.length);
      const changed = [...value].map((c, i) => (c !== token[i] ? i : -1)).filter((i) => i >= 0);
      expect(changed).toHaveLength(1);
      const index = changed[0] as number;
      expect(value[index]?.toLowerCase()).not.toBe(token[index]?.toLowerCase());
      expect(resolved).toEqual({ op: 'replace', index, char: value[index] });
    },
  );

  test.prop([base64urlArb, fc.constantFrom(0, 0.5, 1), fc.constantFrom(...BASE64URL_ALPHABET.split(''))])(
    'first, middle and last positions, padding aside; a lenient base64url decoder always sees the change',
    (token, at, char) => {
      const { value, resolved } = applyTransform(token, { op: 'replace', at, char });
      const index = (resolved as { index: number }).index;
      if (at === 0) expect(index).toBe(0);
      if (at === 1) expect(index).toBe(token.replace(/=+$/, '').length - 1);
      // Node's decoder ignores the unused low bits of a last character: the change is in a used one.
      const decode = (t: string) =>
        t.split('.').map((segment) => Buffer.from(segment, 'base64url').toString('hex'));
      expect(decode(value)).not.toEqual(decode(token));
    },
  );

  test.prop([
    hexArb,
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.constantFrom(...BASE64URL_ALPHABET.split('')),
  ])(
    'a hex token stays hex, in its case, and differs even compared case-insensitively',
    (token, at, char) => {
      const { value } = applyTransform(token, { op: 'replace', at, char });
      expect(value).toMatch(/^[0-9a-f]+$/);
      expect(value.toLowerCase()).not.toBe(token.toLowerCase());
      const upper = applyTransform(token.toUpperCase(), { op: 'replace', at, char }).value;
      // A token of digits only has no case to keep: its replacement letter is lower case, as hex mostly is.
      expect(upper).toMatch(/[A-F]/.test(token.toUpperCase()) ? /^[0-9A-F]+$/ : /^[0-9a-f]+$/);
    },
  );

  it('the last character of a base64 signature: A and g decode differently, A and B may not', () => {
    // 32 bytes (an HMAC-SHA256) are 43 base64url characters: the last one carries 2 unused bits.
    const signature = Buffer.alloc(32, 7).toString('base64url');
    const unusedBitsOnly = `${signature.slice(0, -1)}${String.fromCharCode(signature.charCodeAt(42) + 1)}`;
    expect(Buffer.from(unusedBitsOnly, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    const { value } = applyTransform(signature, { op: 'replace', at: 1, char: 'A' });
    expect(Buffer.from(value, 'base64url')).not.toEqual(Buffer.from(signature, 'base64url'));
  });

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
