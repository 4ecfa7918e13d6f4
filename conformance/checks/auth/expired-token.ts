import type { Check } from '../../check-kit/check-contract.ts';
import { genuineTokenRefused } from '../../check-kit/genuine-token-refused.ts';
import { EXPIRED_TOKEN } from '../../check-kit/support.ts';

/**
 * Needs --expired-token or --expired-token-command: a genuine token past its lifetime is refused on every
 * protected endpoint like any invalid token. Without it the check is skipped, and a run exits 2 naming the
 * option (unless an expected-results file lists the skip).
 */
export const expiredToken: Check = {
  id: 'auth.expired-token',
  title: 'A genuine token past its lifetime gets 401 invalid_identity_token on every protected endpoint',
  specRef: [{ section: 5, rules: [3] }],
  level: 'MUST',
  needs: ['expiredToken'],
  run: genuineTokenRefused({
    token: EXPIRED_TOKEN,
    label: 'an expired identity token',
    fix: "check the token's expiry (exp) on every endpoint and answer 401 invalid_identity_token once it has passed",
  }),
};
