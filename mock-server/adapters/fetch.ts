import type { GatewayCore } from '../core.ts';
import { GatewayError } from '../errors.ts';
import type { DeliveryFacts, GatewayRequest } from '../http/context.ts';
import { incompleteBody, payloadTooLarge } from '../http/read-body.ts';
import { stallRuns } from './node/loop-stall.ts';

/** A streamed answer (the journal export) as a web stream: each slice made when the reader pulls. */
function streamOf(
  first: string,
  slices: Iterable<string> | AsyncIterable<string>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = (async function* () {
    if (first) yield first;
    yield* slices;
  })();
  return new ReadableStream({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await iterator.return(undefined);
    },
  });
}

/**
 * An answer known in full, as a web stream whose `tee()` (what `Response.clone()` does) makes two
 * independent copies of the bytes. A tee's branch settles `cancel()` only once the other branch is
 * cancelled too; msw 2 clones every mocked response for its `response:mocked` event and never reads or
 * cancels the clone, so a client that cancels an answer's body (the openai and Anthropic SDKs do, before
 * each retry) would wait forever. Two copies of a body already in memory have nothing to wait for.
 */
function bodyOf(text: string): ReadableStream<Uint8Array> {
  return copyOf(new TextEncoder().encode(text));
}

function copyOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes.slice());
      controller.close();
    },
  });
  stream.tee = () => [copyOf(bytes), copyOf(bytes)];
  return stream;
}

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

/**
 * A web `Request` as the core sees it. There is no connection: msw and direct calls have none; what the
 * caller had received when it issued the request (`delivery`) stands for it.
 */
export function fromWebRequest(request: Request, delivery?: DeliveryFacts): GatewayRequest {
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
    ...(delivery ? { delivery } : {}),
  };
}

/**
 * The web-standard adapter: `fetch(Request): Promise<Response>` over the core, for msw's `http.all(...)`,
 * tests and `app.fetch`-style hosts. A dropped connection is `Response.error()`, which fetch callers see
 * as a network error. The answer counts as written when the Response is handed back.
 *
 * In process there is no connection to tell a reaction from a request already on its way, so the adapter
 * keeps the causality itself: it numbers the answers in the order it hands them back, and notes, when a
 * request is issued (synchronously, at the call), how many it had handed back. A request issued after a
 * 429 was handed back reacted to it, however soon; requests issued together before any answer are a batch,
 * however slowly they were served. The caller is taken to be in process: hosted behind a network server,
 * answers written later than they are handed back would make requests look like reactions. Like the node:http
 * adapter it notes the event loop's runs of stalls before each request (`readStalls`, the journal's
 * `stall_runs`): in process the client's timers run on the same loop, so a stall lengthens its waits alike.
 *
 * @example
 * const fetchHandler = createFetchHandler(core);
 * const response = await fetchHandler(new Request('http://gw.test/v1/health'));
 */
export function createFetchHandler(core: GatewayCore): (request: Request) => Promise<Response> {
  let handedBack = 0;
  return async (request) => {
    // Before anything is awaited: what the caller had when it issued the request.
    const delivery: DeliveryFacts = { seen: handedBack };
    const answer = await core.handle({ ...fromWebRequest(request, delivery), readStalls: stallRuns() });
    const response = answer.drop
      ? Response.error()
      : new Response(
          request.method === 'HEAD'
            ? null
            : answer.stream
              ? streamOf(answer.body, answer.stream)
              : answer.body
                ? bodyOf(answer.body)
                : null,
          {
            status: answer.status,
            headers: answer.headers,
          },
        );
    delivery.order = ++handedBack;
    answer.record(performance.now());
    return response;
  };
}
