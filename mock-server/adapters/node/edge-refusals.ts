import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../errors.ts';

/**
 * Requests the Node adapter refuses at the edge, before the core sees them: small named checks, each tied to
 * the RFC it enforces. Each returns the catalogue error to answer (400 JSON, then the connection closes),
 * or undefined. They cost a request a string comparison and one pass over its raw header names.
 */

/**
 * RFC 9112 section 3.2: a server MUST answer 400 to a request with more than one Host header field (two
 * hosts are how request smuggling through a proxy that reads the other one starts). Node keeps the first.
 */
function duplicateHost(req: IncomingMessage): GatewayError | undefined {
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1)
      return new GatewayError('invalid_request', {
        message: 'The request has more than one Host header (RFC 9112 section 3.2): send exactly one.',
        details: { field: 'Host' },
      });
  }
  return undefined;
}

/**
 * This server speaks HTTP/1.0 and HTTP/1.1 (RFC 9112 section 2.3): a request line naming another version
 * (`HTTP/2.0`, `HTTP/0.9`, `HTTP/1.2`) was served as if it were 1.x. It is a 400 now (RFC 9110 section
 * 6.2 allows 505 for an unsupported major version; 400 keeps one answer for every malformed request line).
 */
function unsupportedVersion(req: IncomingMessage): GatewayError | undefined {
  const version = req.httpVersion;
  if (version === '1.1' || version === '1.0') return undefined;
  return new GatewayError('invalid_request', {
    message: `HTTP/${version} is not spoken here: send HTTP/1.1 (or HTTP/1.0) requests.`,
    details: { http_error: 'unsupported_version', http_version: version },
  });
}

/**
 * RFC 9112 section 3.2: an HTTP/1.1 request without Host is a 400. Node would answer it itself, without a
 * body (`requireHostHeader`), so the adapter says it in the catalogue's format instead.
 */
export function missingHost(req: IncomingMessage): GatewayError | undefined {
  if (req.headers.host !== undefined || req.httpVersion !== '1.1') return undefined;
  return new GatewayError('invalid_request', {
    message: 'An HTTP/1.1 request must carry a Host header (RFC 9112 section 3.2).',
    details: { field: 'Host' },
  });
}

/**
 * A request with method PRI is how HTTP/2 starts (RFC 9113 section 3.4): Node destroys the connection as soon
 * as the request listener returns, so the answer must be written before it does (`refuse` answers at once).
 */
export function http2Preface(req: IncomingMessage): GatewayError | undefined {
  if (req.method !== 'PRI') return undefined;
  return new GatewayError('invalid_request', {
    message: 'PRI starts HTTP/2 (RFC 9113 section 3.4): this server speaks HTTP/1.1; send HTTP/1.1 requests.',
    details: { http_error: 'PRI' },
  });
}

/** The edge checks in order: the first refusal, or undefined. */
export function edgeRefusal(req: IncomingMessage): GatewayError | undefined {
  return unsupportedVersion(req) ?? duplicateHost(req);
}

/**
 * Whether the connection must close after this answer: it was written before the request's body arrived
 * (a 413 for a Content-Length over the cap, a refusal before reading), so the rest of the body, or the
 * client's half-close in the middle of it, could only be misread as another request. One answer per
 * request, then close (RFC 9112 section 9.6).
 */
export function closesAfterAnswer(request: { readonly complete: boolean }): boolean {
  return !request.complete;
}
