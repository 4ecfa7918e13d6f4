import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import type { NodeHandler } from '../adapters/node-server.ts';
import type { VirtualClock } from '../clock.ts';
import type { GatewayConfigOverlay } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import type { Answer, CallContext, GatewayRequest, GatewayResponse } from '../http/context.ts';
import { requestIdFor } from '../http/request-id.ts';
import { respondError } from '../http/respond.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { capturedBytes } from '../journal/exchange-capture.ts';
import { writeSlices } from '../journal/write-slices.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { isAdminPath } from '../routes/admin-schemas.ts';
import { routingPath } from '../routes/router.ts';
import { faultTargets } from '../scenarios/faults.ts';
import { credentialNames } from '../secrets/credential-names.ts';
import { createAgentNames } from './agent-names.ts';
import { ANALYSED_BYTES, operationOf, toolNamed } from './exchange-notes.ts';
import { createExchangeRecord } from './exchange-record.ts';
import { forward } from './forward.ts';
import { createLearnedKeys, type DeclaredKeys, faultArmedFor, TOKEN_OPERATION } from './learned-keys.ts';
import { type ProxyDeadlines, type ProxyOwnOptions, proxyOptionsSchema } from './proxy-options.ts';
import { cutOffFinding, failureAnswer } from './target-failures.ts';
import { carriesAdminKey, collector, endToEnd, withoutAdminKey } from './wire.ts';

/*
 * The proxy, by job: wire.ts (hop-by-hop headers, the admin key kept back, bodies kept in part), forward.ts
 * (one request to the target under the deadlines), target-failures.ts (what the proxy answers and finds when
 * the target fails), agent-names.ts (which agent a token is, asked of the target), exchange-notes.ts (what
 * the journal learns of an exchange), proxy-options.ts (deadlines, fields kept). This file puts them together.
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
  const target = new URL(options.target);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new GatewayError('invalid_request', {
      message: `The target must be an http:// or https:// URL, got ${target.protocol}`,
    });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const parsed = proxyOptionsSchema.safeParse({
    connectTimeoutMs: options.connectTimeoutMs,
    firstByteTimeoutMs: options.firstByteTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    keepField: options.keepField,
  });
  if (!parsed.success)
    throw new GatewayError('invalid_request', {
      message: `Invalid proxy options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    });
  const { keepField, ...deadlines } = parsed.data;
  const isCredential = credentialNames(keepField);
  const gateway = createGateway({
    config: options.config,
    adminKey: options.adminKey,
    clock: options.clock,
    serveIdentityProvider: false,
    log,
  });
  const { runtime } = gateway;
  const keys = createLearnedKeys(runtime.registry, options);
  const secure = target.protocol === 'https:';
  const upstreamAgent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const basePath = target.pathname.replace(/\/+$/, '');
  // A whoami the proxy asks of the target is held to the same deadlines (at most 5 s by default).
  const whoamiTimeout =
    options.whoamiTimeoutMs ?? Math.min(5000, deadlines.connectTimeoutMs + deadlines.firstByteTimeoutMs);

  const upstream = (method: string, path: string, headers: string[] | OutgoingHttpHeaders) =>
    send({
      protocol: target.protocol,
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (secure ? 443 : 80),
      method,
      path: `${basePath}${path}`,
      headers: headers as OutgoingHttpHeaders,
      agent: upstreamAgent,
      setHost: false,
    });

  const names = createAgentNames(
    (token) =>
      upstream(ENDPOINTS.whoami.method, ENDPOINTS.whoami.path, {
        host: target.host,
        [IDENTITY_HEADER_KEY]: token,
        accept: 'application/json',
      }),
    whoamiTimeout,
  );

  /** Writes an answer the proxy makes itself (admin API, fault, unreachable target). */
  /** Resolves, once written, with when it was handed to the socket (what the journal records). */
  const writeOwn = (res: ServerResponse, answer: GatewayResponse | Answer): Promise<number> =>
    new Promise((resolve) => {
      if (answer.drop) {
        res.req.socket.destroy();
        resolve(performance.now());
        return;
      }
      if (answer.stream) {
        // A long admin answer (the journal export), slice by slice with backpressure.
        const stream = answer.stream;
        res.writeHead(answer.status, answer.headers);
        if (answer.body) res.write(answer.body);
        writeSlices(stream, res).then(
          () => res.end(),
          () => res.destroy(),
        );
      } else {
        res.writeHead(answer.status, {
          ...answer.headers,
          'content-length': String(Buffer.byteLength(answer.body)),
        });
        res.end(answer.body);
      }
      const handedOver = performance.now();
      res.once('finish', () => resolve(handedOver));
      res.once('close', () => resolve(handedOver));
    });

  const serveAdmin = async (request: GatewayRequest, res: ServerResponse) => {
    const answer = await gateway.core.handle(request);
    answer.record(await writeOwn(res, answer));
  };

  const bodyBytes = () => runtime.config.journal.body_bytes;

  const handleNode = async (request: GatewayRequest, req: IncomingMessage, res: ServerResponse) => {
    const path = routingPath(request.path);
    if (options.adminKey && isAdminPath(path)) return serveAdmin(request, res);
    // A URL that carries the proxy's admin key is not forwarded (nor journaled with it).
    const leaksKey = options.adminKey !== undefined && carriesAdminKey(req.url ?? '', options.adminKey);
    if (leaksKey) request = Object.create(request, { path: { value: '/[REDACTED]' }, query: { value: '' } });
    const started = performance.now();
    const operation = operationOf(path, runtime.tools);
    const ctx = {
      request,
      runtime,
      requestId: requestIdFor(undefined),
      note: { operation },
      at: runtime.clock.now(),
      started,
    } satisfies CallContext as { -readonly [K in keyof CallContext]: CallContext[K] };
    const token = request.header(IDENTITY_HEADER_KEY)?.trim() || undefined;
    // A token first seen on a whoami is named by that whoami's own answer: no extra request to the target
    // (which would count against the agent's rate limit there).
    let namedByThis: ((name: string) => void) | undefined;
    if (token) {
      ctx.note.token = tokenFingerprint(token);
      // Named by its own answer, unless an armed fault must know whose it is before deciding (learned-keys.ts).
      const byAnswer = !names.byToken.get(token) && !faultArmedFor(runtime.faults.list(), operation);
      if (operation === 'whoami' && request.method === 'GET' && byAnswer)
        names.byToken.set(
          token,
          new Promise<string>((resolve) => {
            namedByThis = resolve;
          }),
        );
      else ctx.note.agent = await names.of(token, request.connection?.id);
    }
    const keep = bodyBytes();
    const learns = operation === TOKEN_OPERATION;
    const requestBody = collector(
      Math.max(capturedBytes(keep), toolNamed(runtime.tools, operation) || learns ? ANALYSED_BYTES : 0),
    );
    // The proxy's own credentials are neither forwarded nor journaled.
    const requestHeaders = withoutAdminKey(req.rawHeaders, options.adminKey);

    /** The journal entry, once the answer is written (or the connection is gone). */
    const record = createExchangeRecord({
      runtime,
      ctx,
      names,
      token,
      namedByThis: () => namedByThis,
      requestBody,
      requestHeaders,
      keep,
      httpVersion: req.httpVersion,
      isCredential,
      onRecord: (status, responseText) =>
        keys.onRecord(ctx, token, { operation, status, request: requestBody, answer: responseText }),
    });

    /** An answer the proxy makes itself (fault, unreachable target): the request's body is read and dropped. */
    const answerOwn = async (answer: Answer) => {
      // Recorded once the body is in (or the client gone), so the journal learns what the request meant.
      const ended = req.readableEnded
        ? undefined
        : new Promise<void>((resolve) => {
            const { socket } = req;
            const done = () => {
              socket.off('close', done);
              resolve();
            };
            req.once('end', done);
            req.once('close', done);
            req.once('error', done);
            // A request answered before its body was all in is not closed when its connection is.
            socket.once('close', done);
          });
      if (!req.listeners('data').length) req.on('data', (chunk: Buffer) => requestBody.add(chunk));
      req.resume();
      const answeredAt = performance.now();
      const writtenAt = await writeOwn(res, answer);
      if (ended) await ended;
      record(
        answer.drop ? 0 : answer.status,
        answeredAt,
        { raw: Object.entries(answer.headers).flat(), text: answer.body },
        writtenAt,
      );
    };

    if (leaksKey) {
      ctx.note.fault = 'proxy:admin_key_in_url';
      return answerOwn(
        respondError(
          ctx,
          new GatewayError('invalid_request', {
            message:
              "The request's URL carries the proxy's admin key: it is not forwarded to the target. Send the key only in X-Admin-Key, to /__admin.",
            details: { proxy: true },
          }),
        ),
      );
    }
    if (faultTargets(runtime.tools).includes(operation)) {
      let fault: Answer | undefined;
      try {
        const struck = injectFault(runtime, ctx, operation, ctx.note.agent);
        fault = struck instanceof Promise ? await struck : struck;
      } catch (error) {
        fault = respondError(ctx, error);
      }
      if (fault) return answerOwn(fault);
    }

    const forwarded = endToEnd(requestHeaders, (lower) => lower === 'host');
    forwarded.unshift('Host', target.host);
    return forward({
      req,
      res,
      out: upstream(
        request.method,
        // An absolute-form target (`GET http://host/path?q`) is sent on in origin form, query included.
        req.url?.startsWith('/') ? req.url : `${request.path}${request.query ? `?${request.query}` : ''}`,
        forwarded,
      ),
      deadlines,
      requestBody,
      answerCapacity: (status) =>
        Math.max(capturedBytes(keep), status >= 400 || namedByThis || learns ? ANALYSED_BYTES : 0),
      answered: ({ status, answeredAt, raw, body, writtenAt, cutOff }) => {
        if (cutOff) {
          ctx.note.fault = `proxy:${cutOff.kind}`;
          ctx.note.findings = [cutOffFinding(cutOff)];
        }
        record(status, answeredAt, { raw, body }, writtenAt);
      },
      failed: async (failure) => {
        // The agent hung up first: nothing to answer, the exchange is journaled as dropped.
        if (failure.kind === 'agent_gone') {
          ctx.note.fault = 'proxy:agent_gone';
          return record(0, performance.now(), { raw: [] });
        }
        const { error, fault, findings } = failureAnswer(failure);
        ctx.note.fault = fault;
        if (findings) ctx.note.findings = findings;
        if (res.destroyed) return record(0, performance.now(), { raw: [] });
        const answer = respondError(ctx, error);
        // The request's body is not all in (a target that took none of it): answered, then the connection is
        // closed (RFC 9112 section 9.6) rather than the rest read, so the exchange is journaled now.
        if (!req.complete) answer.headers = { ...answer.headers, connection: 'close' };
        return answerOwn(answer);
      },
    });
  };

  return {
    gateway,
    target,
    deadlines,
    keptFields: keepField,
    config: gateway.config,
    handleNode,
    refuse: (error, request) => gateway.core.refuse(error, request),
    close: () => upstreamAgent.destroy(),
  };
}
