import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { GatewayCore } from '../core.ts';
import type { ConnectionFacts, GatewayRequest } from '../pipeline/context.ts';
import { incompleteBody, payloadTooLarge } from '../pipeline/read-body.ts';

/** Anything with a web-standard handler (a faulty gateway of the proof catalogue, your own fetch app). */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const CONNECTION = Symbol('gateway connection facts');
type TrackedSocket = Socket & { [CONNECTION]?: ConnectionFacts };
// A Host header is echoed into links (token instructions): only a plain host[:port] is trusted.
const PLAIN_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** An IncomingMessage as the core sees it: no web objects, headers read straight from Node's parse. */
class NodeRequest implements GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly connection: ConnectionFacts | undefined;
  private readonly req: IncomingMessage;
  private reading: Promise<Uint8Array> | undefined;

  constructor(req: IncomingMessage) {
    this.req = req;
    this.method = req.method ?? 'GET';
    let target = req.url ?? '/';
    // Absolute-form targets (`GET http://host/path`, as proxies send them) carry the path after the authority.
    if (!target.startsWith('/')) {
      try {
        const url = new URL(target);
        target = `${url.pathname}${url.search}`;
      } catch {
        target = `/${target}`;
      }
    }
    const q = target.indexOf('?');
    this.path = q === -1 ? target : target.slice(0, q);
    this.query = q === -1 ? '' : target.slice(q + 1);
    this.connection = (req.socket as TrackedSocket)[CONNECTION];
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return typeof value === 'string' || value === undefined ? value : value.join(', ');
  }

  get origin(): string {
    const host = this.req.headers.host;
    if (host && PLAIN_HOST.test(host)) return `http://${host}`;
    const { localAddress, localPort } = this.req.socket;
    const address = localAddress?.includes(':') ? `[${localAddress}]` : (localAddress ?? '127.0.0.1');
    return `http://${address}:${localPort}`;
  }

  body(maxBytes: number): Promise<Uint8Array> {
    this.reading ??= readNodeBody(this.req, maxBytes);
    return this.reading;
  }
}

/** Reads a request body up to `maxBytes` (413 beyond, whatever Content-Length said; 400 when cut short). */
function readNodeBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
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
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}

/** node:http straight onto the core: one record in, one `writeHead` + `end` out, then the record stage. */
function coreListener(core: GatewayCore, log: (line: string) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    core
      .handle(new NodeRequest(req))
      .then((answer) => {
        if (answer.drop) {
          // The "drop" fault: a TCP reset, as a real network failure would look.
          req.socket.destroy();
          answer.record(performance.now());
          return;
        }
        const headers = answer.headers;
        headers['content-length'] = String(Buffer.byteLength(answer.body));
        res.writeHead(answer.status, headers);
        res.end(answer.body);
        answer.record(performance.now());
      })
      .catch((error: unknown) => {
        // The core answers every error itself; this is a bug in writing the answer. Never crash the server.
        log(
          `gateway adapter: could not write an answer: ${error instanceof Error ? error.stack : String(error)}`,
        );
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"code":"internal_error","message":"Internal error; it has been logged."}');
      });
  };
}

/** A fetch handler served through @hono/node-server; `Response.error()` destroys the socket. */
function fetchListener(handler: FetchHandler) {
  return getRequestListener((request, env) =>
    handler.fetch(request).then((response) => {
      // Only Response.error() has status 0. Reading `type` instead would force @hono/node-server to
      // materialise its lightweight Response into a web stream.
      if (response.status !== 0) return response;
      (env as { incoming: IncomingMessage }).incoming.socket.destroy();
      return new Response(null, { status: 204 });
    }),
  );
}

/**
 * Serves the gateway (or any fetch handler) over Node's HTTP server on loopback by default. The gateway goes
 * straight onto node:http, with no web Request/Response objects on the way, and learns each request's
 * connection; another fetch handler is served through @hono/node-server. A dropped connection (fault) is a
 * TCP reset.
 *
 * @example
 * const server = await serve(createGateway(), { port: 0 });
 * await fetch(`${server.url}/v1/health`);
 * await server.close();
 */
export async function serve(
  handler: FetchHandler | { core: GatewayCore },
  options: { port?: number; host?: string; log?: (line: string) => void } = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const listener = 'core' in handler ? coreListener(handler.core, log) : fetchListener(handler);
  const server: Server = createServer(listener);
  let connections = 0;
  server.on('connection', (socket: TrackedSocket) => {
    socket[CONNECTION] = {
      id: ++connections,
      openedAt: performance.now(),
      remoteAddress: socket.remoteAddress,
    };
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
