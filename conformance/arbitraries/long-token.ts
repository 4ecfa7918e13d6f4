import fc from 'fast-check';
import type { TokenValue } from '../token-value.ts';

/** 1,000 to 4,000 characters: well within common header limits, so it must get a plain 401. */
export const longToken = (): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(fc.integer({ min: 1000, max: 4000 }), fc.stringMatching(/^[A-Za-z0-9_-]{8}$/))
    .map(([length, unit]) => ({
      kind: 'literal',
      value: unit.repeat(Math.ceil(length / 8)).slice(0, length),
    }));

/** 6,000 to 12,000 characters: a server may refuse the header itself (400, 413, 414, 431), never with a 5xx. */
export const oversizedToken = (): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(fc.integer({ min: 6000, max: 12000 }), fc.stringMatching(/^[A-Za-z0-9_-]{8}$/))
    .map(([length, unit]) => ({
      kind: 'literal',
      value: unit.repeat(Math.ceil(length / 8)).slice(0, length),
    }));
