import type { GatewayCore } from '../core.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayRequest } from '../pipeline/context.ts';
import { incompleteBody, payloadTooLarge } from '../pipeline/read-body.ts';

/** Reads a web request's body, stopping (413) as soon as it passes `maxBytes`, whatever Content-Length claimed. */
async function readWebBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) throw payloadTooLarge(maxBytes);
  try {
    if (Number.isInteger(declared)) {
      // The transport bounds the body to its declared length.
      const buffer = await request.arrayBuffer();
      if (buffer.byteLength > maxBytes) throw payloadTooLarge(maxBytes);
      return new Uint8Array(buffer);
    }
    if (!request.body) return new Uint8Array();
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Not awaited: msw's request streams never settle a cancel, which would hang the 413.
        reader.cancel().catch(() => {});
        throw payloadTooLarge(maxBytes);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw incompleteBody();
  }
}

/** A web `Request` as the core sees it. There is no connection: msw and direct calls have none. */
export function fromWebRequest(request: Request): GatewayRequest {
  const url = new URL(request.url);
  let body: Promise<Uint8Array> | undefined;
  return {
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    header: (name) => request.headers.get(name) ?? undefined,
    headers: () => request.headers.entries(),
    body: (maxBytes) => {
      body ??= readWebBody(request, maxBytes);
      return body;
    },
    origin: url.origin,
  };
}

/**
 * The web-standard adapter: `fetch(Request): Promise<Response>` over the core, for msw's `http.all(...)`,
 * tests and `app.fetch`-style hosts. A dropped connection is `Response.error()`, which fetch callers see
 * as a network error. The answer counts as written when the Response is handed back.
 *
 * @example
 * const fetchHandler = createFetchHandler(core);
 * const response = await fetchHandler(new Request('http://gw.test/v1/health'));
 */
export function createFetchHandler(core: GatewayCore): (request: Request) => Promise<Response> {
  return async (request) => {
    const answer = await core.handle(fromWebRequest(request));
    const response = answer.drop
      ? Response.error()
      : new Response(request.method === 'HEAD' || answer.body === '' ? null : answer.body, {
          status: answer.status,
          headers: answer.headers,
        });
    answer.record(performance.now());
    return response;
  };
}
