import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

// Printable ASCII without spaces: HTTP trims leading and trailing whitespace, which would change the token.
const TOKEN_CHAR = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/=!#$%&*^|'.split(''),
);

/** A random printable token, 1-200 characters: never a real token. */
export const garbageToken = (): fc.Arbitrary<TokenValue> =>
  fc.string({ unit: TOKEN_CHAR, minLength: 1, maxLength: 200 }).map((value) => ({ kind: 'literal', value }));
