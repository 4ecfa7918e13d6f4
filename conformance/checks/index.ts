import { accessDenied } from './access-denied.ts';
import { allowedCallsServed } from './allowed-calls-served.ts';
import { authBeforeAuthorization } from './auth-before-authorization.ts';
import type { Check } from './check-contract.ts';
import { errorBodyShape } from './error-body-shape.ts';
import { expiredToken, revokedToken } from './expired-token.ts';
import { headerNameCaseInsensitive } from './header-name-case-insensitive.ts';
import { healthIgnoresBadToken } from './health-ignores-bad-token.ts';
import { healthWithValidToken } from './health-with-valid-token.ts';
import { healthWithoutToken } from './health-without-token.ts';
import { invalidToken } from './invalid-token.ts';
import { malformedBody } from './malformed-body.ts';
import { missingToken } from './missing-token.ts';
import { no5xxUnderBurst } from './no-5xx-under-burst.ts';
import { rateLimitBurst } from './rate-limit-burst.ts';
import { retryAfterFormat } from './retry-after-format.ts';
import { retryAfterHonoured } from './retry-after-honoured.ts';
import { retryConcurrent } from './retry-concurrent.ts';
import { retrySequential } from './retry-sequential.ts';
import { validTokenAccepted } from './valid-token-accepted.ts';
import { whoamiAnyTier } from './whoami-any-tier.ts';
import { whoamiIdentity } from './whoami-identity.ts';
import { whoamiTier } from './whoami-tier.ts';

/**
 * Every check, in the order they run. authz.allowed-calls-served comes first among the token checks: a
 * gateway that serves nothing fails there, by name, with the quota still fresh. The rate-limit checks
 * come last: their burst exhausts the valid token's quota, which would only slow the others down.
 * auth.valid-token-accepted runs after them all: it judges what the whole run saw of the real tokens.
 * retry.concurrent runs before retry.sequential: a copy it saw refused after a wait is a repeat over time,
 * which retry.sequential reports (run-blame.ts).
 */
export const CHECKS: readonly Check[] = [
  healthWithoutToken,
  allowedCallsServed,
  healthWithValidToken,
  healthIgnoresBadToken,
  missingToken,
  invalidToken,
  expiredToken,
  revokedToken,
  headerNameCaseInsensitive,
  authBeforeAuthorization,
  accessDenied,
  whoamiAnyTier,
  whoamiIdentity,
  whoamiTier,
  errorBodyShape,
  malformedBody,
  retryConcurrent,
  retrySequential,
  rateLimitBurst,
  no5xxUnderBurst,
  retryAfterFormat,
  retryAfterHonoured,
  validTokenAccepted,
];
