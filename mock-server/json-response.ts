/**
 * The one way the gateway answers JSON, errors included: `content-type: application/json`, the request id,
 * and any extra headers, all as a plain object (the Node adapter writes those without building a Headers).
 *
 * @example
 * return jsonResponse({ status: 'ok' }, { requestId, headers: { 'cache-control': 'no-store' } });
 */
export function jsonResponse(
  body: unknown,
  init: { status?: number; requestId?: string; headers?: Record<string, string> } = {},
): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.requestId) headers['x-request-id'] = init.requestId;
  if (init.headers) Object.assign(headers, init.headers);
  return new Response(JSON.stringify(body), { status: init.status ?? 200, headers });
}
