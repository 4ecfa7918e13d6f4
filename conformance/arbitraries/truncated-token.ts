import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

/** A prefix of the valid token (at least one character, at most all but one). */
export const truncatedToken = (): fc.Arbitrary<TokenValue> =>
  // Unbiased: fast-check leans towards extreme values, which would cut to one character or to almost all.
  fc.noBias(fc.integer({ min: 1, max: 999 })).map((permille) => ({
    kind: 'derived',
    from: 'valid',
    transform: { op: 'truncate', keep: permille / 1000 },
  }));

/** Cuts tried on every seed: all but the last character (the commonest prefix bug), and half. */
export const TRUNCATED_BOUNDARIES: TokenValue[] = [0.999999, 0.5].map((keep) => ({
  kind: 'derived',
  from: 'valid',
  transform: { op: 'truncate', keep },
}));
