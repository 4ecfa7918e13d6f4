import type { NodeHandler } from '../adapters/node-server.ts';
import type { VirtualClock } from '../clock.ts';
import type { GatewayConfigOverlay } from '../config/schema.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import { credentialNames } from '../secrets/credential-names.ts';
import { createAgentNames } from './agent-names.ts';
import { createExchangeHandler } from './exchange.ts';
import { createLearnedKeys, type DeclaredKeys } from './learned-keys.ts';
import { type ProxyDeadlines, type ProxyOwnOptions, readProxyOptions } from './proxy-options.ts';
import { createUpstream, targetUrl } from './upstream.ts';

/*
 * The proxy, by job: upstream.ts (the target's URL and the client of it), exchange.ts (one exchange as its
 * steps: admin API, context, agent named, own refusals and faults, forwarding), own-answer.ts (an answer the
 * proxy writes itself, recorded once the request's body is in), wire.ts (hop-by-hop headers, the admin key
 * kept back, bodies kept in part), forward.ts (one request to the target under the deadlines),
 * target-failures.ts (what the proxy answers and finds when the target fails), agent-names.ts (which agent a
 * token is, asked of the target), exchange-notes.ts (what the journal learns of an exchange),
 * exchange-record.ts (its journal entry), proxy-options.ts (deadlines, fields kept). This file puts them
 * together.
 */

export { agentIdOf } from './exchange-notes.ts';

/**
 * Proxy mode: every request is forwarded to a target gateway and its answer streamed back unchanged apart
 * from hop-by-hop headers, while the journal records the exchange with the same facts as `serve` (the
 * connection it came on, which request on it, when the answer was written), so the client report grades the
 * agent against a real gateway; the target's answers are judged passively (findings); the fault rules apply.
 *
 * The upstream client is node:http (node:https for an https target) with a keep-alive agent: both sides are
 * Node streams, so a body is piped with backpressure and never buffered whole; the raw header list is kept
 * (order, spelling, repeated Set-Cookie); and nothing is decoded (fetch, undici's included, would undo
 * Content-Encoding and re-frame the body, which a proxy that passes answers through unchanged must not do).
 */
export interface ProxyOptions extends ProxyOwnOptions {
  /** The target gateway's base URL; a path in it prefixes every forwarded path. */
  target: string;
  /** Enables /__admin (journal, report, findings, faults, clock, export) on the proxy itself. */
  adminKey?: string;
  /** Journal capacity and kept body size (`journal.body_bytes`), server hardening. */
  config?: GatewayConfigOverlay;
  clock?: VirtualClock;
  log?: (line: string) => void;
  /** How long the whoami asked of the target to name a token's agent may take (default 5 s, or the connect and first byte deadlines together when shorter). */
  whoamiTimeoutMs?: number;
  /** Agents' own API keys (agent id to key), so a leak of one is found as the agent's own (learned-keys.ts). */
  apiKeys?: DeclaredKeys;
  /** A file of such keys: a JSON object, or lines `agent-id=key`. */
  apiKeysFile?: string;
}

export interface Proxy extends NodeHandler {
  /** The proxy's own state: journal, faults, clock, admin API, client reports. */
  gateway: Gateway;
  target: URL;
  /** The deadlines in force on the target (`connectTimeoutMs`, `firstByteTimeoutMs`, `idleTimeoutMs`). */
  deadlines: ProxyDeadlines;
  /** The fields the journal keeps as sent though their names speak of a credential (`keepField`). */
  keptFields: readonly string[];
  close(): void;
}

/**
 * Creates the proxy handler; serve it with `serve(proxy, { port })` (node:http, same hardening and
 * connection facts as the gateway).
 *
 * @example
 * const proxy = createProxy({ target: 'https://staging.example.com', adminKey: 'change-me-please' });
 * const server = await serve(proxy, { port: 8788 });
 */
export function createProxy(options: ProxyOptions): Proxy {
  const target = targetUrl(options.target);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { keepField, ...deadlines } = readProxyOptions(options);
  const gateway = createGateway({
    config: options.config,
    adminKey: options.adminKey,
    clock: options.clock,
    serveIdentityProvider: false,
    log,
  });
  // Its agents' own keys first (a bad keys file stops it here, before any connection to the target).
  const keys = createLearnedKeys(gateway.runtime.registry, options);
  const upstream = createUpstream(target, deadlines, options.whoamiTimeoutMs);
  const handleNode = createExchangeHandler({
    gateway,
    target,
    upstream,
    deadlines,
    names: createAgentNames(upstream.whoami, upstream.whoamiTimeoutMs),
    keys,
    adminKey: options.adminKey,
    isCredential: credentialNames(keepField),
  });
  return {
    gateway,
    target,
    deadlines,
    keptFields: keepField,
    config: gateway.config,
    handleNode,
    refuse: (error, request) => gateway.core.refuse(error, request),
    close: upstream.close,
  };
}
