import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { GatewayError } from '../errors.ts';
import type { ProxyDeadlines } from './proxy-options.ts';

/**
 * The target gateway's URL: http or https, anything else the caller's mistake (400 `invalid_request`).
 *
 * @example
 * targetUrl('https://staging.example.com/gw'); // URL { protocol: 'https:', pathname: '/gw', ... }
 */
export function targetUrl(text: string): URL {
  const target = new URL(text);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new GatewayError('invalid_request', {
      message: `The target must be an http:// or https:// URL, got ${target.protocol}`,
    });
  return target;
}

/**
 * The proxy's client of the target: node:http (node:https for an https target) with a keep-alive agent, each
 * request's path under the target's own path, the Host header left to the caller (the agent's is replaced by
 * the target's; the raw header list is sent as is). `whoami(token)` is the request that names a token's agent
 * (agent-names.ts), held to `whoamiTimeoutMs`: the one given, else at most 5 s (or the connect and first-byte
 * deadlines together when shorter).
 */
export function createUpstream(target: URL, deadlines: ProxyDeadlines, whoamiTimeoutMs?: number) {
  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const basePath = target.pathname.replace(/\/+$/, '');
  /** A request to the target, not yet written to. */
  const request = (method: string, path: string, headers: string[] | OutgoingHttpHeaders): ClientRequest =>
    send({
      protocol: target.protocol,
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (secure ? 443 : 80),
      method,
      path: `${basePath}${path}`,
      headers: headers as OutgoingHttpHeaders,
      agent,
      setHost: false,
    });
  return {
    request,
    whoami: (token: string) =>
      request(ENDPOINTS.whoami.method, ENDPOINTS.whoami.path, {
        host: target.host,
        [IDENTITY_HEADER_KEY]: token,
        accept: 'application/json',
      }),
    whoamiTimeoutMs:
      whoamiTimeoutMs ?? Math.min(5000, deadlines.connectTimeoutMs + deadlines.firstByteTimeoutMs),
    close: () => agent.destroy(),
  };
}

export type Upstream = ReturnType<typeof createUpstream>;
