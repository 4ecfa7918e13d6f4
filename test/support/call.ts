import type { FetchHandler } from '../../mock-server/adapters/node-server.ts';

export interface Call {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * Calls a gateway's handler (or any fetch) with an optional token and a body (JSON unless a string); returns
 * status, headers, the body as text and as JSON (`{ text }` when it is not JSON).
 */
export async function call(
  target: FetchHandler | string,
  method: string,
  path: string,
  options: Call = {},
): Promise<{ status: number; headers: Headers; text: string; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['X-Agent-Identity'] = options.token;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const init: RequestInit = {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
  };
  const response =
    typeof target === 'string'
      ? await fetch(`${target}${path}`, init)
      : await target.fetch(new Request(`http://gw.test${path}`, init));
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { text };
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** The admin API (`/__admin...`) of a gateway, called with `key`. */
export const adminCaller =
  (key: string) => (target: FetchHandler | string, method: string, path: string, body?: unknown) =>
    call(target, method, `/__admin${path}`, { headers: { 'x-admin-key': key }, body });

export const search = (
  target: FetchHandler | string,
  token: string,
  query = 'agent tool gateway',
  headers?: Record<string, string>,
) => call(target, 'POST', '/v1/web/search', { token, body: { query }, headers });
