import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

/** Spaces or tabs inside a token (`abc def`). Leading and trailing ones are trimmed by HTTP, so not here. */
export const innerWhitespaceToken = (): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(
      fc.stringMatching(/^[A-Za-z0-9]{1,20}$/),
      fc.constantFrom(' ', '\t', '  ', ' \t '),
      fc.stringMatching(/^[A-Za-z0-9]{1,20}$/),
    )
    .map(([a, space, b]) => ({ kind: 'literal', value: `${a}${space}${b}` }));

/** A header made only of spaces and tabs: after trimming it is empty, so "missing" and "invalid" are both fair. */
export const blankToken = (): fc.Arbitrary<TokenValue> =>
  fc.constantFrom(' ', '   ', '\t', ' \t ').map((value) => ({ kind: 'literal', value }));
