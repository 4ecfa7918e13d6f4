import { createServer, type IncomingMessage, maxHeaderSize, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_SERVER_SETTINGS, type ServerSettings } from '../config/schema.ts';
import type { GatewayCore } from '../core.ts';
import { GatewayError } from '../errors.ts';
import { plainRefusal, writeRaw } from './node/answers.ts';
import { onClientError } from './node/client-errors.ts';
import { connectionOf, createConnectionGuard, type TrackedSocket } from './node/connection-guard.ts';
import type { FetchHandler, NodeHandler } from './node/handlers.ts';
import { coreListener, nodeListener } from './node/listeners.ts';
import { NodeRequest } from './node/request.ts';

/*
 * The Node adapter, split by job under node/ (as @hono/node-server is): request.ts (the request record and its
 * body reader), edge-refusals.ts (the protocol refusals before the core), listeners.ts (the gateway's and a
 * Node handler's listeners), connection-guard.ts (connections per client address), client-errors.ts (what
 * Node's parser refused), answers.ts (writing answers), fetch-listener.ts (foreign fetch handlers, the only
 * module that loads hono). This file serves.
 */

export type { FetchHandler, NodeHandler } from './node/handlers.ts';

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Connections the kernel may hold for this server before it accepts them (Node's default is 511): a burst
 * of a thousand connections from a busy process would otherwise wait on SYN retransmits. Linux caps it at
 * net.core.somaxconn (4096 by default since 5.4).
 */
const LISTEN_BACKLOG = 4096;

/** Node checks its header and request timeouts on an interval: a tenth of the shorter, within 50 ms to 1 s. */
const checkingInterval = (settings: ServerSettings) =>
  Math.min(
    1000,
    Math.max(50, Math.round(Math.min(settings.headers_timeout_ms, settings.request_timeout_ms) / 10)),
  );

/**
 * Serves the gateway (or any fetch handler) over Node's HTTP server on loopback by default. The gateway goes
 * straight onto node:http, with no web Request/Response objects on the way, and learns each request's
 * connection; another fetch handler is served through @hono/node-server, loaded only then. A dropped
 * connection (fault) is a TCP reset.
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
  const guard = createConnectionGuard(settings.max_connections_per_client, {
    closeGraceMs: settings.headers_timeout_ms,
    idleTimeoutMs: settings.idle_timeout_ms,
  });
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
      : // Only here is hono loaded: the gateway's own path never needs it.
        (await import('./node/fetch-listener.ts')).fetchListener(handler as FetchHandler, guard, refuse);
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
  // Node destroys an idle kept-alive connection at that timeout unless the server listens for it: the guard
  // does, and closes it only if no request arrived meanwhile (after reading what is waiting), at the second
  // timeout (clients were told the first, in Keep-Alive).
  server.on('timeout', (socket: TrackedSocket) => guard.idleTimedOut(socket));
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
      .handle(new NodeRequest(req, undefined, connectionOf(req.socket)?.facts))
      .then((answer) => (answer.drop ? socket.destroy() : writeRaw(socket, answer)))
      .catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 8787, host, backlog: LISTEN_BACKLOG }, () => {
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
