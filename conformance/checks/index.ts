import type { Check } from '../check-kit/check-contract.ts';
import { authBeforeAuthorization } from './auth/before-authorization.ts';
import { expiredToken } from './auth/expired-token.ts';
import { headerNameCaseInsensitive } from './auth/header-name-case-insensitive.ts';
import { invalidToken } from './auth/invalid-token.ts';
import { missingToken } from './auth/missing-token.ts';
import { revokedToken } from './auth/revoked-token.ts';
import { validTokenAccepted } from './auth/valid-token-accepted.ts';
import { accessDenied } from './authz/access-denied.ts';
import { allowedCallsServed } from './authz/allowed-calls-served.ts';
import { whoamiAnyTier } from './authz/whoami-any-tier.ts';
import { whoamiIdentity } from './authz/whoami-identity.ts';
import { whoamiTier } from './authz/whoami-tier.ts';
import { errorBodyShape } from './errors/json-body.ts';
import { malformedBody } from './errors/malformed-body.ts';
import { healthIgnoresBadToken } from './health/ignores-bad-token.ts';
import { healthWithValidToken } from './health/with-valid-token.ts';
import { healthWithoutToken } from './health/without-token.ts';
import { rateLimitBurst } from './ratelimit/burst-429.ts';
import { no5xxUnderBurst } from './ratelimit/no-5xx-under-burst.ts';
import { retryAfterFormat } from './ratelimit/retry-after-format.ts';
import { retryAfterHonoured } from './ratelimit/retry-after-honoured.ts';
import { retryConcurrent } from './retry/concurrent.ts';
import { retrySequential } from './retry/sequential.ts';

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
