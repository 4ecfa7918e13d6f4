import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { GatewayError } from '../../errors.ts';
import type { GatewayResponse } from '../../http/context.ts';
import type { ConnectionGuard, TrackedSocket } from './connection-guard.ts';
import { edgeRefusal, missingHost } from './edge-refusals.ts';
import type { FetchHandler } from './handlers.ts';

/**
 * A foreign fetch handler (not the gateway) served through @hono/node-server, with the connection guard and
 * the edge refusals; `Response.error()` destroys the socket. This module is the only one that loads hono:
 * `serve` imports it when it is given such a handler, never on the gateway's own path.
 */
export function fetchListener(
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
