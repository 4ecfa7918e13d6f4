import type fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';
import { extendedToken } from './extended-token.ts';
import { garbageToken } from './garbage-token.ts';
import { longToken, oversizedToken } from './long-token.ts';
import { mutatedToken } from './mutated-token.ts';
import { truncatedToken } from './truncated-token.ts';
import { unicodeToken } from './unicode-token.ts';
import { blankToken, innerWhitespaceToken } from './whitespace-token.ts';

/** Kinds of bad token; the expected answer depends on the kind (see auth.invalid-token). */
export type BadTokenKind =
  | 'garbage'
  | 'unicode'
  | 'inner-whitespace'
  | 'blank'
  | 'long'
  | 'oversized'
  | 'mutated-first'
  | 'mutated-middle'
  | 'mutated-last'
  | 'truncated'
  | 'extended';

/**
 * Every kind of token a gateway must refuse, by kind. The kinds derived from the valid token (changed at
 * the first, a middle or the last position, truncated, extended) are only there when a valid token was
 * given.
 */
export function badTokenKinds(options: {
  derived: boolean;
}): Partial<Record<BadTokenKind, fc.Arbitrary<TokenValue>>> {
  return {
    garbage: garbageToken(),
    unicode: unicodeToken(),
    'inner-whitespace': innerWhitespaceToken(),
    blank: blankToken(),
    long: longToken(),
    oversized: oversizedToken(),
    ...(options.derived
      ? {
          'mutated-first': mutatedToken('first'),
          'mutated-middle': mutatedToken('middle'),
          'mutated-last': mutatedToken('last'),
          truncated: truncatedToken(),
          extended: extendedToken(),
        }
      : {}),
  };
}
