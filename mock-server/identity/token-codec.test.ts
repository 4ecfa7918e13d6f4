import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { createTokenCodec, type TokenClaims } from './token-codec.ts';

const SECRET = 'a-test-signing-secret-of-enough-length';
const codec = createTokenCodec(SECRET);
const claims: TokenClaims = { sub: 'agent-early', jti: 'j-1', iss: 'idp', iat: 1000, exp: 2000, gen: 0 };
const token = codec.encode(claims);
const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';

describe('token codec', () => {
  it('round-trips the claims', () => {
    expect(codec.decode(token)).toEqual({ ok: true, claims });
  });

  it('refuses a token signed with another secret', () => {
    const forged = createTokenCodec('another-secret-of-enough-length').encode(claims);
    expect(codec.decode(forged)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  test.prop([fc.nat({ max: token.length - 1 }), fc.constantFrom(...TOKEN_CHARS)])(
    'any single changed character is refused, including the padding bits of the last one',
    (index, char) => {
      fc.pre(token[index] !== char);
      const changed = token.slice(0, index) + char + token.slice(index + 1);
      expect(codec.decode(changed).ok).toBe(false);
    },
  );

  test.prop([fc.nat({ max: token.length - 1 })])('any truncation is refused', (length) => {
    expect(codec.decode(token.slice(0, length)).ok).toBe(false);
  });

  test.prop([fc.string({ minLength: 1, maxLength: 8 })])('any extension is refused', (suffix) => {
    expect(codec.decode(token + suffix).ok).toBe(false);
  });

  test.prop([fc.string({ unit: 'binary', maxLength: 400 })])(
    'arbitrary strings never decode and never throw',
    (s) => {
      expect(codec.decode(s).ok).toBe(false);
    },
  );

  it('refuses a correctly signed payload that is not a claims object', () => {
    // Signed exactly as the codec signs (HMAC-SHA256 over "agt1.<payload>"), but the payload is not claims.
    for (const payload of ['"just a string"', '{"sub":"x"}', 'not json']) {
      const signed = `agt1.${Buffer.from(payload).toString('base64url')}`;
      const signature = createHmac('sha256', SECRET).update(signed).digest('base64url');
      expect(codec.decode(`${signed}.${signature}`)).toEqual({ ok: false, reason: 'malformed' });
    }
  });
});
