import { fingerprint } from '../hash.ts';
import { createTokenMemo } from './token-memo.ts';

const tokenFingerprints = createTokenMemo<string>();

/**
 * The journal's fingerprint of a token: `tok_` and 8 hex digits; the token cannot be recovered from it. Used
 * by the identify stage, the proxy and the exchange capture, so it sits below all three.
 */
export function tokenFingerprint(token: string): string {
  return tokenFingerprints.get(token) ?? tokenFingerprints.set(token, fingerprint('tok', token));
}

/** The one copy of a token whose fingerprint was taken (see `createTokenMemo().shared`), else the token. */
export const sharedToken = (token: string): string => tokenFingerprints.shared(token);
