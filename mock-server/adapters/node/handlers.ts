import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerSettings } from '../../config/schema.ts';
import type { GatewayError } from '../../errors.ts';
import type { GatewayRequest, GatewayResponse } from '../../http/context.ts';

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
