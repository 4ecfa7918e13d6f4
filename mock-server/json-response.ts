/** Options of a JSON response: status, the request id, and extra headers (plain object). */
export interface JsonResponseInit {
  status?: number;
  requestId?: string;
  headers?: Record<string, string>;
}

/**
 * A response whose body is already-serialised JSON (the idempotency store replays such text). Headers are
 * a plain object: the Node adapter writes those without building a Headers.
 */
export function jsonTextResponse(text: string, init: JsonResponseInit = {}): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.requestId) headers['x-request-id'] = init.requestId;
  if (init.headers) Object.assign(headers, init.headers);
  return new Response(text, { status: init.status ?? 200, headers });
}

/**
 * The one way the gateway answers JSON, errors included: `content-type: application/json`, the request id,
 * and any extra headers.
 *
 * @example
 * return jsonResponse({ status: 'ok' }, { requestId, headers: { 'cache-control': 'no-store' } });
 */
export const jsonResponse = (body: unknown, init: JsonResponseInit = {}): Response =>
  jsonTextResponse(JSON.stringify(body), init);

/** For answers that must never be cached or replayed by an intermediary: tokens, identities, tool results. */
export const NO_STORE = { 'cache-control': 'no-store' } as const;
