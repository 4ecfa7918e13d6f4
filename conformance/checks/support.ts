import fc from 'fast-check';
import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { SPEC_ERROR_STATUSES, type SpecErrorCode } from '../../vocabulary/error-codes.ts';
import type { Exchange, SuiteRequest } from '../model/suite-request.ts';
import type { TokenValue } from '../model/token-value.ts';
import {
  type CheckContext,
  CheckFailure,
  codeOf,
  describeResponse,
  type Endpoint,
} from './check-contract.ts';

/** The token the suite was given, unaltered. */
export const VALID_TOKEN: TokenValue = { kind: 'derived', from: 'valid', transform: { op: 'none' } };
export const DENIED_TOKEN: TokenValue = { kind: 'derived', from: 'denied', transform: { op: 'none' } };
/** A genuine token past its lifetime (--expired-token), unaltered. */
export const EXPIRED_TOKEN: TokenValue = { kind: 'derived', from: 'expired', transform: { op: 'none' } };
/** A genuine token its identity provider revoked (--revoked-token), unaltered. */
export const REVOKED_TOKEN: TokenValue = { kind: 'derived', from: 'revoked', transform: { op: 'none' } };

export const HEALTH_PATH = SPEC_ENDPOINTS.health.path;

/** The request an endpoint is normally called with (its configured body, if any). */
export function requestFor(endpoint: Endpoint, extra: Partial<SuiteRequest> = {}): SuiteRequest {
  return {
    method: endpoint.method,
    path: endpoint.path,
    headers: endpoint.body !== undefined ? { 'Content-Type': 'application/json' } : {},
    body: endpoint.body,
    ...extra,
  };
}

/** Any of the protected endpoints (whoami and the tools checked). */
export const protectedEndpoint = (endpoints: CheckContext['endpoints']) =>
  fc.constantFrom(...protectedEndpoints(endpoints));

/**
 * The protected endpoints, in a fixed order: whoami, then the tools the gateway declares (the spec's two
 * by default). A tool the gateway was not said to declare is never called: its 404 would be no failure.
 */
export const protectedEndpoints = (endpoints: CheckContext['endpoints']): Endpoint[] =>
  Object.values(endpoints);

/** The endpoint of the tool the denied token may not call (the runner checks it is one of the tools). */
export const deniedEndpoint = (ctx: Pick<CheckContext, 'endpoints' | 'deniedTool'>): Endpoint =>
  ctx.endpoints[ctx.deniedTool] as Endpoint;

/** The status section 7 pairs with each of the spec's error codes. */
export const SPEC_STATUS_OF_CODE: Readonly<Record<string, number>> = SPEC_ERROR_STATUSES;

/** application/json, or any application/*+json (e.g. application/problem+json). */
export const isJsonContentType = (value: string | undefined) =>
  /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(value ?? '');

/** Fails unless the response has the status and one of the codes (spec section 7: status plus a stable `code`). */
export function expectError(
  exchange: Exchange,
  status: number,
  codes: readonly SpecErrorCode[],
  fix: string,
): void {
  const code = codeOf(exchange);
  if (
    exchange.response.status === status &&
    typeof code === 'string' &&
    (codes as readonly string[]).includes(code)
  ) {
    // Every error is JSON, and says so (spec section 7): a JSON body labelled otherwise is not one.
    const type = exchange.response.headers['content-type'];
    if (isJsonContentType(type)) return;
    throw new CheckFailure({
      expected: `${status} with code "${code}" and a JSON content type`,
      actual: `${status} with code "${code}" labelled ${type ? `"${type}"` : 'without a Content-Type'}`,
      fix: 'send every error with Content-Type: application/json (or an application/*+json type)',
      exchange,
    });
  }
  throw new CheckFailure({
    expected: `${status} with code ${codes.map((c) => `"${c}"`).join(' or ')}`,
    actual: describeResponse(exchange),
    fix,
    exchange,
  });
}

/**
 * Whether the gateway (or its HTTP server) refused the header itself as unacceptable, as it fairly may,
 * rather than judging the token: 431 Request Header Fields Too Large for any long header; for an
 * oversized one also 400, 413 or 414; for non-ASCII bytes a 400, bare or as a JSON error whose code is
 * not one section 7 pairs with another status.
 */
export function refusedByServer(
  kind: 'long' | 'oversized' | 'unicode' | string,
  exchange: Exchange,
): boolean {
  const { status } = exchange.response;
  if (kind === 'long') return status === 431;
  if (kind === 'oversized') return [400, 413, 414, 431].includes(status);
  if (kind === 'unicode') {
    if (status === 431) return true;
    if (status !== 400) return false;
    const code = codeOf(exchange);
    if (code === undefined) return true;
    return (
      typeof code === 'string' &&
      SPEC_STATUS_OF_CODE[code] === undefined &&
      isJsonContentType(exchange.response.headers['content-type'])
    );
  }
  return false;
}

/**
 * Fails on a 5xx or a dropped connection. For bad input (the default) the fix is about client mistakes;
 * for a valid call (`{ badInput: false }`, e.g. a repeat) it is the general server-error advice: a 5xx on
 * a repeated whoami is not "bad input".
 */
export function expectNoServerError(
  exchange: Exchange,
  what: string,
  options: { badInput?: boolean } = {},
): void {
  const { status } = exchange.response;
  if (status !== 0 && status < 500) return;
  throw new CheckFailure({
    expected: `a 4xx (or 2xx) answer to ${what}`,
    actual: describeResponse(exchange),
    fix: 'treat bad input as a client error (4xx); never let it crash a handler or drop the connection',
    exchange,
    aboutServerErrors: options.badInput !== false,
  });
}
