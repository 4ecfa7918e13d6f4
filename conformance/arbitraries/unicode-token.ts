import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

/** A token with non-ASCII characters (sent as UTF-8 bytes): emoji, accents, CJK, right-to-left marks. */
export const unicodeToken = (): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(
      fc.stringMatching(/^[A-Za-z0-9._-]{1,30}$/),
      fc.constantFrom('é', 'ü', '日本', '🤖', '\u202e', 'ß', 'Ω', '\u00a0x', 'ℌ'),
    )
    .map(([ascii, special]) => ({ kind: 'literal', value: `${ascii}${special}${ascii.slice(0, 3)}` }));
