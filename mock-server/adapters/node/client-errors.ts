import type { ServerSettings } from '../../config/schema.ts';
import { GatewayError } from '../../errors.ts';
import type { GatewayResponse } from '../../http/context.ts';
import { writeRaw } from './answers.ts';
import { busy, connectionOf, requestsOf, type TrackedSocket } from './connection-guard.ts';
import { NodeRequest } from './request.ts';

/** The 408 of a request (or connection) that did not arrive in time. */
const requestTimeout = (settings: ServerSettings) =>
  new GatewayError('request_timeout', {
    message: `The request did not arrive in time: its headers must arrive within ${settings.headers_timeout_ms} ms, and all of it within ${settings.request_timeout_ms} ms.`,
    details: {
      headers_timeout_ms: settings.headers_timeout_ms,
      request_timeout_ms: settings.request_timeout_ms,
    },
  });

/** The catalogue's error for what Node's HTTP parser refused (codes as llhttp and node:http name them). */
function parserError(error: NodeJS.ErrnoException, settings: ServerSettings, maxHeaderSize: number) {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('request_header_fields_too_large', {
        message: `The request line and headers are larger than ${maxHeaderSize} bytes.`,
        details: { max_bytes: maxHeaderSize },
      });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('payload_too_large', {
        message: 'The chunk extensions of the request body are too large.',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return requestTimeout(settings);
    case 'HPE_INVALID_EOF_STATE':
      return new GatewayError('invalid_request', {
        message: 'The client closed its side of the connection before the request was complete.',
        details: { http_error: error.code },
      });
    default: {
      // llhttp's reasons are fixed phrases ("Invalid method encountered"): nothing of the request is echoed.
      const reason = (error as { reason?: string }).reason ?? error.message.replace(/^Parse Error: /, '');
      return new GatewayError('invalid_request', {
        message: `The request is not valid HTTP/1.1: ${reason}.`,
        details: { http_error: error.code ?? 'unknown' },
      });
    }
  }
}

/**
 * The server's `clientError` listener. What Node's parser could not turn into a request (unknown method, bad
 * target, bytes HTTP forbids in a header, a header section over the limit, conflicting Content-Length and
 * Transfer-Encoding, a broken chunk, a request that did not arrive in time) gets the catalogue's JSON error
 * with a request id, as long as the socket allows it. A request the core holds whose rest will never come is
 * answered by the core (408 or 400, journaled: its body read fails with the error); a complete one in
 * progress is answered first and the connection closes after it; one whose answer is being written, or a
 * client that is gone, only closes the connection.
 */
export function onClientError(
  settings: ServerSettings,
  maxHeaderSize: number,
  refuse: (error: GatewayError) => GatewayResponse,
) {
  const answer = (error: NodeJS.ErrnoException, socket: TrackedSocket) => {
    const state = connectionOf(socket);
    const requests = state ? requestsOf(state) : [];
    const answering = requests.some((r) => (r instanceof NodeRequest ? r.res?.headersSent : r.headersSent));
    // Closing after an answer already given (closeAfter, no request left): one answer per request, no other.
    const answered = state?.closeAfter === true && requests.length === 0;
    if (!socket.writable || error.code === 'ECONNRESET' || error.code === 'EPIPE' || answering || answered) {
      socket.destroy();
      return;
    }
    const refusal = parserError(error, settings, maxHeaderSize);
    if (state && requests.length > 0 && requests.every((r) => r instanceof NodeRequest)) {
      state.closeAfter = true;
      for (const request of requests as NodeRequest[]) if (!request.complete) request.abort(refusal);
      return;
    }
    writeRaw(socket, refuse(refusal));
  };
  return (error: NodeJS.ErrnoException, socket: TrackedSocket) => {
    // Node checks its headers timeout on a timer, which runs before sockets are read: on a busy process a
    // connection whose request had arrived, unread, was answered 408. Decided a turn later, after the read:
    // a request that started meanwhile is served. (Only a complete request head counts, so a client that
    // trickles its headers still gets its 408.)
    const state = connectionOf(socket);
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && state && !busy(state)) {
      const begun = state.begun;
      setImmediate(() => {
        if (!socket.destroyed && state.begun === begun) answer(error, socket);
      });
      return;
    }
    answer(error, socket);
  };
}
