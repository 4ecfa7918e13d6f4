import type { ResolvedTransform, TokenValue } from './token-value.ts';

/* What the suite sends and what it learns: a request as a check describes it, and the exchange it gets back. */

/** A request as a check describes it. Header names keep their case; values may carry raw bytes (latin1). */
export interface SuiteRequest {
  method: string;
  path: string;
  /** The identity token to send, if any, and under which header name spelling. */
  token?: TokenValue;
  tokenHeader?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SuiteResponse {
  /** 0 when no HTTP response arrived (connection refused, reset, timeout). */
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
  error?: string;
}

/** Which token a request carried: the two real ones unaltered, none, or anything else (a bad one). */
export type Credential = 'valid' | 'denied' | 'expired' | 'revoked' | 'none' | 'bad';

/** One request and its final response, with what the client did in between. */
export interface Exchange {
  request: SuiteRequest;
  url: string;
  credential: Credential;
  /** The call as the suite tracks whether the gateway ever served it: method, path and credential. */
  key: string;
  /** Headers as sent, token redacted. */
  sentHeaders: [string, string][];
  /** Which real token value was sent unaltered (the token ledger's number for it), when one was. */
  tokenId?: number;
  /** How the token was derived, for the curl reproduction. */
  tokenTransform?: { variable: string; transform: ResolvedTransform };
  response: SuiteResponse;
  /** Attempts made (more than 1 after 429 backoff or a token refresh). */
  attempts: number;
  /** True when the gateway still answered 429 after the retry cap or beyond --max-wait-seconds. */
  rateLimitExhausted: boolean;
  /**
   * With rateLimitExhausted, when the wait asked was within --max-wait-seconds but would have overrun the
   * run's time budget (--time-budget-seconds).
   */
  timeBudgetExhausted?: boolean;
  /** With rateLimitExhausted: the wait the last 429 asked for (ms), when it said (Retry-After). */
  retryAfterMs?: number;
  /**
   * With rateLimitExhausted: the retry cap ran out although every retry waited the Retry-After its 429 asked
   * for, within --max-wait-seconds: the gateway's Retry-After is not truthful (no budget of the user's to raise).
   */
  retryAfterUntruthful?: boolean;
  /** Retries of a 502/503/504 before this answer (spec section 7: transient). */
  transientRetries: number;
  /** With transientRetries: the status of the first failed attempt. */
  transientStatus?: number;
}

/** The credential class of a request's token. */
export function credentialOf(request: SuiteRequest): Credential {
  const { token } = request;
  if (!token) return 'none';
  if (token.kind === 'derived' && token.transform.op === 'none') return token.from;
  return 'bad';
}

/** The key under which the client remembers whether the gateway ever answered a call. */
export const callKey = (request: SuiteRequest) =>
  `${request.method} ${request.path} (${credentialOf(request)} token)`;
