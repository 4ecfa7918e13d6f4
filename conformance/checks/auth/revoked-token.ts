import type { Check } from '../../check-kit/check-contract.ts';
import { genuineTokenRefused } from '../../check-kit/genuine-token-refused.ts';
import { REVOKED_TOKEN } from '../../check-kit/support.ts';

/**
 * Needs --revoked-token or --revoked-token-command: a genuine token the identity provider revoked before its
 * expiry is refused on every protected endpoint like any invalid token.
 */
export const revokedToken: Check = {
  id: 'auth.revoked-token',
  title:
    'A genuine token the identity provider revoked gets 401 invalid_identity_token on every protected endpoint',
  specRef: [{ section: 5, rules: [3] }],
  level: 'MUST',
  needs: ['revokedToken'],
  run: genuineTokenRefused({
    token: REVOKED_TOKEN,
    label: 'a revoked identity token',
    fix: 'check revocations on every endpoint (the identity provider’s revocation list, or verify with it) and answer 401 invalid_identity_token for a revoked token',
  }),
};
