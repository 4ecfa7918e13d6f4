import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';

/** Anything with the gateway's web-standard handler. */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves a fetch handler over Node's HTTP server. A `Response.error()` from the handler (the gateway's
 * "dropped connection" fault) destroys the socket, as a real network failure would.
 *
 * @example
 * const server = await serve(createGateway(), { port: 0 });
 * await fetch(`${server.url}/v1/health`);
 * await server.close();
 */
export async function serve(
  handler: FetchHandler,
  options: { port?: number; host?: string } = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createAdaptorServer({
    hostname: host,
    fetch: (request, env) =>
      handler.fetch(request).then((response) => {
        // Only Response.error() has status 0. Reading `type` instead would force @hono/node-server to
        // materialise its lightweight Response into a web stream, several times the cost of the request.
        if (response.status !== 0) return response;
        (env as HttpBindings).incoming.socket.destroy();
        return new Response(null, { status: 204 });
      }),
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
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
