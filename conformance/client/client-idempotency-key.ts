import { createHash } from 'node:crypto';
import type { Exchange, SuiteRequest } from '../model/suite-request.ts';

/**
 * The idempotency key the suite sends with a write-like tool (spec §7: "for write-like operations an
 * idempotency key should be included where supported; the header name: not shown"). The header is the one
 * of draft-ietf-httpapi-idempotency-key-header, the name most gateways read.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * The key of one call: derived from its method, path and body, so every repeat of the same call (a retry
 * after a 429, a copy sent at once, the same case in another check or run) carries the same key, and two
 * different calls never share one. Sent bare (base64url characters), which both a raw comparison and a
 * structured-field parser accept.
 *
 * @example
 * idempotencyKeyOf('POST', '/v1/web/snapshot', '{"url":"https://example.com/"}'); // 'agc-…' (36 characters)
 */
export function idempotencyKeyOf(method: string, path: string, body: string | undefined): string {
  const digest = createHash('sha256')
    .update(`${method} ${path}\n${body ?? ''}`)
    .digest('base64url');
  return `agc-${digest.slice(0, 32)}`;
}

const hasKeyHeader = (headers: Record<string, string> | undefined) =>
  Object.keys(headers ?? {}).some((name) => name.toLowerCase() === IDEMPOTENCY_KEY_HEADER.toLowerCase());

/**
 * The request with its idempotency key when it calls a write-like tool (by method and path), unless it
 * carries one already; any other request as it is.
 */
export function withIdempotencyKey(request: SuiteRequest, writeLikePaths: ReadonlySet<string>): SuiteRequest {
  if (request.method !== 'POST' || !writeLikePaths.has(request.path) || hasKeyHeader(request.headers))
    return request;
  return {
    ...request,
    headers: {
      ...request.headers,
      [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyOf(request.method, request.path, request.body),
    },
  };
}

/** Whether an exchange's request carried an idempotency key (it called a tool declared write-like). */
export const carriedIdempotencyKey = (exchange: Pick<Exchange, 'request'>): boolean =>
  hasKeyHeader(exchange.request.headers);
