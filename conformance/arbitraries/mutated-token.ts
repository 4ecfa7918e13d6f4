import fc from 'fast-check';
import { BASE64URL_ALPHABET, type TokenValue } from '../token-value.ts';

/** The valid token with one character changed (never the last one; always a different letter case-insensitively). */
export const mutatedToken = (): fc.Arbitrary<TokenValue> =>
  fc
    // Unbiased position: fast-check leans towards the ends, and every position should be equally likely.
    .tuple(
      fc.noBias(fc.integer({ min: 0, max: 1000 })).map((p) => p / 1000),
      fc.constantFrom(...BASE64URL_ALPHABET.split('')),
    )
    .map(([at, char]) => ({ kind: 'derived', from: 'valid', transform: { op: 'replace', at, char } }));
