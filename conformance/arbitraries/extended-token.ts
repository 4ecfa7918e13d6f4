import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

/** The valid token with 1-16 token characters appended. */
export const extendedToken = (): fc.Arbitrary<TokenValue> =>
  fc
    .stringMatching(/^[A-Za-z0-9_.-]{1,16}$/)
    .map((suffix) => ({ kind: 'derived', from: 'valid', transform: { op: 'append', suffix } }));
