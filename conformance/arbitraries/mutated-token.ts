import fc from 'fast-check';
import { BASE64URL_ALPHABET, type TokenValue } from '../model/token-value.ts';

/** Where in the token the character is changed: a verifier may look at only part of it. */
export type MutatedPosition = 'first' | 'middle' | 'last';

/**
 * The valid token with one character changed, at the first position, somewhere in the middle, or at the
 * last significant one (a gateway that compares a prefix, or ignores the last character, is caught
 * there). The new character always differs case-insensitively and in a bit the encoding uses.
 */
export const mutatedToken = (position: MutatedPosition): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(
      position === 'first'
        ? fc.constant(0)
        : position === 'last'
          ? fc.constant(1)
          : // Unbiased: fast-check leans towards the ends, and every inner position should be equally likely.
            fc.noBias(fc.integer({ min: 1, max: 999 })).map((p) => p / 1000),
      fc.constantFrom(...BASE64URL_ALPHABET.split('')),
    )
    .map(([at, char]) => ({ kind: 'derived', from: 'valid', transform: { op: 'replace', at, char } }));
