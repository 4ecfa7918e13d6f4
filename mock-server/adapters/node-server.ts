import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { DEFAULT_SERVER_SETTINGS, type ServerSettings } from '../config/schema.ts';
import type { GatewayCore } from '../core.ts';
import { GatewayError } from '../errors.ts';
import type { ConnectionFacts, GatewayRequest, GatewayResponse } from '../http/context.ts';
import { incompleteBody, payloadTooLarge } from '../http/read-body.ts';
import { closesAfterAnswer, edgeRefusal } from './edge-refusals.ts';

/** Anything with a web-standard handler (a faulty gateway of the proof catalogue, your own fetch app). */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

/**
 * A handler that writes its own answers on Node's response, with the same connection facts, caps and JSON
 * refusals as the gateway (the proxy: it streams a target's answers through). `refuse` answers what the
 * adapter refuses before the handler (and journals it, when given the request).
 */
export interface NodeHandler {
  handleNode(request: GatewayRequest, req: IncomingMessage, res: ServerResponse): Promise<void>;
  refuse(error: GatewayError, request?: GatewayRequest): GatewayResponse;
  config?: { server: ServerSettings };
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const CONNECTION = Symbol('gateway connection state');
type TrackedSocket = Socket & { [CONNECTION]?: ConnectionState };
// A Host header is echoed into links (token instructions): only a plain host[:port] is trusted.
const PLAIN_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** The path and query of an absolute-form target; anything else is read as a path that no route has. */
function pathOfAbsoluteForm(target: string): string {
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return `/${target}`;
  }
}

/** An IncomingMessage as the core sees it: no web objects, headers read straight from Node's parse. */
class NodeRequest implements GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly connection: ConnectionFacts | undefined;
  /** Undefined for a CONNECT, which Node hands over with the bare socket. */
  readonly res: ServerResponse | undefined;
  private readonly req: IncomingMessage;
  private reading: Promise<Uint8Array> | undefined;
  /** Set once the rest of the request cannot come (timeout, parser error): reading the body fails with it. */
  private aborted: GatewayError | undefined;
  private failReading: ((error: GatewayError) => void) | undefined;

  constructor(req: IncomingMessage, res: ServerResponse | undefined) {
    this.req = req;
    this.res = res;
    this.method = req.method ?? 'GET';
    let target = req.url ?? '/';
    // Absolute-form targets (`GET http://host/path`, as proxies send them) carry the path after the authority;
    // a CONNECT's authority-form target (`host:port`) is read as a path, which no route has.
    if (!target.startsWith('/'))
      target = this.method === 'CONNECT' ? `/${target}` : pathOfAbsoluteForm(target);
    const q = target.indexOf('?');
    this.path = q === -1 ? target : target.slice(0, q);
    this.query = q === -1 ? '' : target.slice(q + 1);
    this.connection = (req.socket as TrackedSocket)[CONNECTION]?.facts;
  }

  rawHeaders(): readonly string[] {
    return this.req.rawHeaders;
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return typeof value === 'string' || value === undefined ? value : value.join(', ');
  }

  *headers(): Iterable<[string, string]> {
    for (const [name, value] of Object.entries(this.req.headers))
      if (value !== undefined) yield [name, typeof value === 'string' ? value : value.join(', ')];
  }

  get origin(): string {
    const host = this.req.headers.host;
    if (host && PLAIN_HOST.test(host)) return `http://${host}`;
    const { localAddress, localPort } = this.req.socket;
    const address = localAddress?.includes(':') ? `[${localAddress}]` : (localAddress ?? '127.0.0.1');
    return `http://${address}:${localPort}`;
  }

  arrivedBody(maxBytes: number): Uint8Array | undefined {
    const req = this.req;
    // Only a whole body already buffered (it came with the headers): anything else is read by `body`.
    if (this.aborted || this.reading || !req.complete || req.readableFlowing) return undefined;
    if (Number(req.headers['content-length']) > maxBytes) return undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
      chunks.push(chunk);
      total += chunk.length;
    }
    if (total > maxBytes) {
      this.reading = Promise.reject(payloadTooLarge(maxBytes));
      this.reading.catch(() => {});
      return undefined;
    }
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
    this.reading = Promise.resolve(bytes);
    return bytes;
  }

  body(maxBytes: number): Promise<Uint8Array> {
    if (this.aborted) return Promise.reject(this.aborted);
    this.reading ??= readNodeBody(this.req, maxBytes, (fail) => {
      this.failReading = fail;
    });
    return this.reading;
  }

  /**
   * The rest of the request will never arrive (Node's request timeout, a parser error in the body, the client
   * half-closed): the body read, now or later, fails with `error`, which the core answers (408, 400).
   */
  abort(error: GatewayError): void {
    this.aborted = error;
    this.failReading?.(error);
  }

  /** Whether the whole request, body included, has arrived. */
  get complete(): boolean {
    return this.req.complete;
  }
}

/**
 * Reads a request body up to `maxBytes` (413 beyond, whatever Content-Length said; 400 when cut short).
 * `onFail` receives a way to end the read with an error of the adapter's (the request timeout).
 */
function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
  onFail: (fail: (error: GatewayError) => void) => void,
): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length']);
  // Not read at all: Node discards what the client still sends once the answer is written.
  if (declared > maxBytes) return Promise.reject(payloadTooLarge(maxBytes));
  if (req.complete && req.readableEnded) return Promise.resolve(new Uint8Array());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) chunks.push(chunk);
      else {
        done();
        reject(payloadTooLarge(maxBytes));
      }
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onAbort = () => {
      done();
      reject(incompleteBody());
    };
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
    };
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    onFail((error) => {
      done();
      reject(error);
    });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}

/**
 * RFC 9112 section 3.2: an HTTP/1.1 request without Host is a 400. Node would answer it itself, without a
 * body (`requireHostHeader`), so the adapter says it in the catalogue's format instead.
 */
function missingHost(req: IncomingMessage): GatewayError | undefined {
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
function http2Preface(req: IncomingMessage): GatewayError | undefined {
  if (req.method !== 'PRI') return undefined;
  return new GatewayError('invalid_request', {
    message: 'PRI starts HTTP/2 (RFC 9113 section 3.4): this server speaks HTTP/1.1; send HTTP/1.1 requests.',
    details: { http_error: 'PRI' },
  });
}

/** Writes the status line, headers and body straight to a socket that has no ServerResponse, then closes it. */
function writeRaw(socket: Socket, answer: GatewayResponse): void {
  const body = Buffer.from(answer.body);
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(answer.headers)) head += `${name}: ${value}\r\n`;
  head += `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  // Destroyed once written: the server's sockets are half-open, and a client that never closes its side
  // must not keep it.
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]), () => socket.destroy());
  answer.record(performance.now());
}

/** Writes the core's answer with one `writeHead` + `end` (or drops the connection), then records it. */
function writeAnswer(res: ServerResponse, answer: GatewayResponse, close: boolean): void {
  if (answer.drop) {
    // The "drop" fault: a TCP reset, as a real network failure would look. (The request's socket: a
    // pipelined response is not attached to it yet.)
    res.req.socket.destroy();
    answer.record(performance.now());
    return;
  }
  const headers = answer.headers;
  headers['content-length'] = String(Buffer.byteLength(answer.body));
  if (close) headers.connection = 'close';
  res.writeHead(answer.status, headers);
  res.end(answer.body);
  answer.record(performance.now());
}

/** The core answers every error itself: this is a bug in writing an answer. Logged; the server lives on. */
function writeFailed(res: ServerResponse, error: unknown, log: (line: string) => void): void {
  log(`gateway adapter: could not write an answer: ${error instanceof Error ? error.stack : String(error)}`);
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
  res.end('{"code":"internal_error","message":"Internal error; it has been logged."}');
}

/** node:http straight onto the core: one record in, one `writeHead` + `end` out, then the record stage. */
function coreListener(core: GatewayCore, guard: ConnectionGuard, log: (line: string) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const request = new NodeRequest(req, res);
    const socket = req.socket as TrackedSocket;
    const state = guard.started(socket, request);
    const refusal = state?.refused
      ? guard.refusal()
      : (missingHost(req) ?? http2Preface(req) ?? edgeRefusal(req));
    if (refusal) {
      // Answered in this tick (a PRI connection does not outlive it), and the connection closes after it.
      if (state) state.closeAfter = true;
      writeAnswer(res, core.refuse(refusal, request), true);
      guard.finished(socket, request);
      return;
    }
    // A microtask later: by then Node's parser has also taken the rest of the bytes that came with the
    // headers, so a small body is there to read without a wait (`arrivedBody`).
    queueMicrotask(() => handleOnCore(core, req, request, res, socket, state, guard, log));
  };
}

/** The core's answer to a request, written; the connection guard learns it is done. */
function handleOnCore(
  core: GatewayCore,
  req: IncomingMessage,
  request: NodeRequest,
  res: ServerResponse,
  socket: TrackedSocket,
  state: ConnectionState | undefined,
  guard: ConnectionGuard,
  log: (line: string) => void,
) {
  core.handle(request).then(
    (answer) => {
      try {
        // After a timeout or a parser error on this connection, or an answer before the body arrived, it
        // closes after this answer, and nothing more is answered on it.
        const close = state?.closeAfter === true || closesAfterAnswer(req);
        if (close && state) state.closeAfter = true;
        writeAnswer(res, answer, close);
      } catch (error) {
        writeFailed(res, error, log);
      }
      guard.finished(socket, request);
    },
    (error: unknown) => {
      writeFailed(res, error, log);
      guard.finished(socket, request);
    },
  );
}

/** A handler writing its own answers (the proxy), with the connection facts and refusals of `coreListener`. */
function nodeListener(handler: NodeHandler, guard: ConnectionGuard, log: (line: string) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const request = new NodeRequest(req, res);
    const socket = req.socket as TrackedSocket;
    const state = guard.started(socket, request);
    const refusal = state?.refused
      ? guard.refusal()
      : (missingHost(req) ?? http2Preface(req) ?? edgeRefusal(req));
    if (refusal) {
      if (state) state.closeAfter = true;
      writeAnswer(res, handler.refuse(refusal, request), true);
      guard.finished(socket, request);
      return;
    }
    handler.handleNode(request, req, res).then(
      () => guard.finished(socket, request),
      (error: unknown) => {
        writeFailed(res, error, log);
        guard.finished(socket, request);
      },
    );
  };
}

/** A fetch handler served through @hono/node-server; `Response.error()` destroys the socket. */
function fetchListener(
  handler: FetchHandler,
  guard: ConnectionGuard,
  refuse: (error: GatewayError) => GatewayResponse,
) {
  const listener = getRequestListener((request, env) =>
    handler.fetch(request).then((response) => {
      // Only Response.error() has status 0. Reading `type` instead would force @hono/node-server to
      // materialise its lightweight Response into a web stream.
      if (response.status !== 0) return response;
      (env as { incoming: IncomingMessage }).incoming.socket.destroy();
      return new Response(null, { status: 204 });
    }),
  );
  return (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as TrackedSocket;
    const state = guard.started(socket, res);
    res.once('close', () => guard.finished(socket, res));
    const refusal = state?.refused ? guard.refusal() : (missingHost(req) ?? edgeRefusal(req));
    if (!refusal) return listener(req, res);
    const answer = refuse(refusal);
    res.writeHead(answer.status, { ...answer.headers, connection: 'close' });
    res.end(answer.body);
  };
}

/** What the adapter knows of one connection, kept on its socket. */
interface ConnectionState {
  readonly facts: ConnectionFacts;
  /** Its client address's group while it counts against the cap (undefined once closed, or when refused). */
  group: ClientGroup | undefined;
  /** Over its client's cap with nothing idle to close: its requests are answered 429 and it closes. */
  refused: boolean;
  /** Requests in progress (core requests, or a fetch handler's responses): pipelined ones can overlap. */
  readonly requests: Set<NodeRequest | ServerResponse>;
  /** A parser error came while a request was in progress: the connection closes after that answer. */
  closeAfter: boolean;
}

/** The connections of one client address; `idle` holds those without a request, longest idle first. */
interface ClientGroup {
  readonly address: string;
  count: number;
  readonly idle: Set<TrackedSocket>;
}

type ConnectionGuard = ReturnType<typeof createConnectionGuard>;

/**
 * Caps the connections of each client address at `maxPerClient`. A connection beyond it makes room by closing
 * the address's longest-idle connection (no request in progress: a socket that never sent a byte, or a
 * kept-alive one between requests), so thousands of idle sockets from one address are shed while its busy
 * connections and new ones keep working; only when every connection of the address has a request in progress
 * is the new one refused. Costs a request two Set operations.
 */
function createConnectionGuard(maxPerClient: number) {
  const groups = new Map<string, ClientGroup>();
  let ids = 0;
  const release = (socket: TrackedSocket, state: ConnectionState) => {
    const group = state.group;
    if (!group) return;
    state.group = undefined;
    group.idle.delete(socket);
    group.count -= 1;
    if (group.count === 0) groups.delete(group.address);
  };

  return {
    opened(socket: TrackedSocket): void {
      const address = socket.remoteAddress ?? '';
      const state: ConnectionState = {
        facts: { id: ++ids, openedAt: performance.now(), remoteAddress: socket.remoteAddress },
        group: undefined,
        refused: false,
        requests: new Set(),
        closeAfter: false,
      };
      socket[CONNECTION] = state;
      let group = groups.get(address);
      if (group && group.count >= maxPerClient) {
        const longestIdle: TrackedSocket | undefined = group.idle.values().next().value;
        if (longestIdle) {
          release(longestIdle, longestIdle[CONNECTION] as ConnectionState);
          longestIdle.destroy();
        } else state.refused = true;
      }
      if (!state.refused) {
        if (!group) {
          group = { address, count: 0, idle: new Set() };
          groups.set(address, group);
        }
        group.count += 1;
        group.idle.add(socket);
        state.group = group;
      }
      socket.once('close', () => release(socket, state));
    },

    /** A request began on the socket: it is no longer idle. */
    started(socket: TrackedSocket, request: NodeRequest | ServerResponse): ConnectionState | undefined {
      const state = socket[CONNECTION];
      if (!state) return undefined;
      if (state.requests.size === 0) state.group?.idle.delete(socket);
      state.requests.add(request);
      return state;
    },

    /** Its answer is written (or the connection is gone): idle again, most recently, once nothing is left. */
    finished(socket: TrackedSocket, request: NodeRequest | ServerResponse): void {
      const state = socket[CONNECTION];
      if (!state) return;
      state.requests.delete(request);
      if (state.requests.size === 0 && state.group && !socket.destroyed) state.group.idle.add(socket);
    },

    /** The answer of a refused connection's request. */
    refusal: () =>
      new GatewayError('rate_limited', {
        message: `This client address already holds ${maxPerClient} connections, each with a request in progress (server.max_connections_per_client): send on those, or retry once one is done, with backoff.`,
        details: { reason: 'connections', limit: maxPerClient },
      }),
  };
}

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
 * What Node's parser could not turn into a request (unknown method, bad target, bytes HTTP forbids in a header,
 * a header section over the limit, conflicting Content-Length and Transfer-Encoding, a broken chunk, a request
 * that did not arrive in time) gets the catalogue's JSON error with a request id, as long as the socket allows
 * it. A request the core holds whose rest will never come is answered by the core (408 or 400, journaled:
 * its body read fails with the error); a complete one in progress is answered first and the connection closes
 * after it; one whose answer is being written, or a client that is gone, only closes the connection.
 */
function onClientError(
  settings: ServerSettings,
  maxHeaderSize: number,
  refuse: (error: GatewayError) => GatewayResponse,
) {
  return (error: NodeJS.ErrnoException, socket: TrackedSocket) => {
    const state = socket[CONNECTION];
    const requests = state ? [...state.requests] : [];
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
}

/** An answer built without a gateway (fetch handlers other than the gateway): the same JSON error format. */
function plainRefusal(error: GatewayError): GatewayResponse {
  const requestId = randomUUID();
  return {
    status: error.status,
    headers: {
      'content-type': 'application/json',
      'x-request-id': requestId,
      date: new Date().toUTCString(),
      ...error.headers,
    },
    body: JSON.stringify(error.toJSON(requestId)),
    record() {},
  };
}

/** Node checks its header and request timeouts on an interval: a tenth of the shorter, within 50 ms to 1 s. */
const checkingInterval = (settings: ServerSettings) =>
  Math.min(
    1000,
    Math.max(50, Math.round(Math.min(settings.headers_timeout_ms, settings.request_timeout_ms) / 10)),
  );

/**
 * Serves the gateway (or any fetch handler) over Node's HTTP server on loopback by default. The gateway goes
 * straight onto node:http, with no web Request/Response objects on the way, and learns each request's
 * connection; another fetch handler is served through @hono/node-server. A dropped connection (fault) is a
 * TCP reset.
 *
 * Hardened from the config's `server:` (a gateway's, else the defaults; `options.server` overrides): header,
 * request and idle timeouts, a cap on connections per client address, and JSON errors for whatever Node's
 * parser refuses (CONNECT included: it gets the core's answer, not a silent close).
 *
 * @example
 * const server = await serve(createGateway(), { port: 0 });
 * await fetch(`${server.url}/v1/health`);
 * await server.close();
 */
export async function serve(
  handler: FetchHandler | NodeHandler | { core: GatewayCore; config?: { server: ServerSettings } },
  options: {
    port?: number;
    host?: string;
    log?: (line: string) => void;
    server?: Partial<ServerSettings>;
  } = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const core = 'core' in handler ? handler.core : undefined;
  const settings: ServerSettings = {
    ...DEFAULT_SERVER_SETTINGS,
    ...('core' in handler || 'handleNode' in handler ? handler.config?.server : undefined),
    ...options.server,
  };
  const guard = createConnectionGuard(settings.max_connections_per_client);
  const own = 'handleNode' in handler ? handler : undefined;
  const refuse = core
    ? (error: GatewayError) => core.refuse(error)
    : own
      ? (error: GatewayError) => own.refuse(error)
      : plainRefusal;
  const listener = core
    ? coreListener(core, guard, log)
    : own
      ? nodeListener(own, guard, log)
      : fetchListener(handler as FetchHandler, guard, refuse);
  const server: Server = createServer(
    {
      headersTimeout: settings.headers_timeout_ms,
      requestTimeout: settings.request_timeout_ms,
      connectionsCheckingInterval: checkingInterval(settings),
      // Node's own answer to a missing Host has no body: the listeners answer it in JSON (missingHost).
      requireHostHeader: false,
    },
    listener,
  );
  // An Expect other than 100-continue: Node would answer a bodiless 417. RFC 9110 section 10.1.1 lets a server
  // ignore an expectation it does not know, so the request is served as if it had none.
  server.on('checkExpectation', listener);
  server.keepAliveTimeout = settings.idle_timeout_ms;
  // A client that half-closes after its request (HTTP/1.0 style, `nc`, some proxies) still gets its answer:
  // by default Node aborts the request and ends the socket on the client's FIN, so an answer that takes a
  // tick (a compressed body, a remote verifier, tool latency) was lost. The connection closes after it.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connection', (socket: TrackedSocket) => guard.opened(socket));
  server.on('clientError', onClientError(settings, maxHeaderSize, refuse));
  // CONNECT (a proxy's method) never reaches the request listener: without this, Node closes the socket.
  server.on('connect', (req: IncomingMessage, socket: TrackedSocket) => {
    if (!core) {
      writeRaw(
        socket,
        plainRefusal(
          new GatewayError('invalid_request', { message: 'CONNECT is not supported: this is not a proxy.' }),
        ),
      );
      return;
    }
    core
      .handle(new NodeRequest(req, undefined))
      .then((answer) => (answer.drop ? socket.destroy() : writeRaw(socket, answer)))
      .catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
