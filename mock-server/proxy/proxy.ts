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
import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import type { NodeHandler } from '../adapters/node-server.ts';
import type { VirtualClock } from '../clock.ts';
import type { GatewayConfigOverlay } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import type { Answer, CallContext, GatewayRequest, GatewayResponse } from '../http/context.ts';
import { requestIdFor } from '../http/request-id.ts';
import { respondError } from '../http/respond.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { judgeAnswer } from '../journal/answer-findings.ts';
import { bodyStart, type ExchangePieces } from '../journal/exchange-capture.ts';
import type { TargetErrorCode } from '../journal/journal.ts';
import { writeSlices } from '../journal/write-slices.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { recordCall } from '../pipeline/record.ts';
import { isAdminPath } from '../routes/admin-schemas.ts';
import { routingPath } from '../routes/router.ts';
import { FAULT_TARGETS, type FaultTarget } from '../scenarios/faults.ts';
import { createAgentNames } from './agent-names.ts';
import { ANALYSED_BYTES, agentIdOf, codeOf, noteRequest, operationOf, TOOL_FIELD } from './exchange-notes.ts';
import { createLearnedKeys, type DeclaredKeys, faultArmedFor, TOKEN_OPERATION } from './learned-keys.ts';
import { type Collector, collector, endToEnd, headerOf } from './wire.ts';

/*
 * The proxy, by job: wire.ts (hop-by-hop headers, bodies kept in part), agent-names.ts (which agent a token
 * is, asked of the target), exchange-notes.ts (what the journal learns of an exchange). This file forwards.
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
export interface ProxyOptions {
  /** The target gateway's base URL; a path in it prefixes every forwarded path. */
  target: string;
  /** Enables /__admin (journal, report, findings, faults, clock, export) on the proxy itself. */
  adminKey?: string;
  /** Journal capacity and kept body size (`journal.body_bytes`), server hardening. */
  config?: GatewayConfigOverlay;
  clock?: VirtualClock;
  log?: (line: string) => void;
  /** How long the whoami asked of the target to name a token's agent may take (default 5 s). */
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
  const whoamiTimeout = options.whoamiTimeoutMs ?? 5000;

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
    const started = performance.now();
    const operation = operationOf(path);
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
    const requestBody = collector(Math.max(keep, TOOL_FIELD[operation] || learns ? ANALYSED_BYTES : 0));
    const requestHeaders = req.rawHeaders;

    /** The journal entry, once the answer is written (or the connection is gone). */
    const record = (
      status: number,
      answeredAt: number,
      answer: { raw: readonly string[]; body?: Collector; text?: string },
      writtenAt = performance.now(),
    ) => {
      const { note } = ctx;
      const responseText =
        answer.text ?? (answer.body?.whole ? answer.body.bytes().toString('utf8') : undefined);
      if (namedByThis && token) {
        const ok = status >= 200 && status < 300 && note.fault === undefined;
        const connection = request.connection?.id;
        note.agent =
          (ok && responseText !== undefined && agentIdOf(responseText)) ||
          (connection !== undefined && names.byConnection.get(connection)) ||
          tokenFingerprint(token);
        namedByThis(note.agent);
      }
      // Only an answer the target gave to a token it accepted ties the connection to the agent.
      if (
        token &&
        note.agent &&
        status >= 200 &&
        status < 400 &&
        request.connection &&
        note.fault === undefined
      )
        names.byConnection.set(request.connection.id, note.agent);
      keys.onRecord(ctx, token, { operation, status, request: requestBody, answer: responseText });
      noteRequest(ctx, operation, requestBody);
      if (status >= 400) {
        const code = codeOf(responseText);
        if (code) note.code = code as TargetErrorCode;
      }
      const retryAfter = headerOf(answer.raw, 'retry-after');
      if (retryAfter !== undefined && note.retry_after === undefined) {
        note.retry_after = retryAfter;
        const parsed = parseRetryAfter(retryAfter);
        if (parsed)
          note.retry_after_ms = retryAfterDelayMs(parsed, headerOf(answer.raw, 'date'), runtime.clock.now());
      }
      if (note.fault === undefined && status !== 0) {
        const targetId = headerOf(answer.raw, 'x-request-id');
        if (targetId) {
          note.target_request_id = targetId;
          ctx.requestId = targetId;
        }
        const lower: Record<string, string> = {};
        for (let i = 0; i + 1 < answer.raw.length; i += 2)
          lower[(answer.raw[i] as string).toLowerCase()] ??= answer.raw[i + 1] as string;
        const findings = judgeAnswer({
          operation,
          method: request.method,
          status,
          headers: lower,
          body: responseText,
          token:
            token !== undefined
              ? 'present'
              : request.header(IDENTITY_HEADER_KEY) === undefined
                ? 'absent'
                : 'blank',
          requestBody: requestBody.whole ? requestBody.bytes().toString('utf8') : undefined,
        });
        if (findings.length > 0) note.findings = findings;
      }
      const raw = answer.raw;
      const pieces: ExchangePieces | undefined =
        keep > 0
          ? {
              requestHeaders,
              requestBody: bodyStart(requestBody.bytes(), keep),
              requestBodyBytes: requestBody.total,
              get responseHeaders() {
                return endToEnd(raw);
              },
              responseBody:
                answer.text !== undefined
                  ? bodyStart(answer.text, keep)
                  : answer.body && bodyStart(answer.body.bytes(), keep),
              responseBodyBytes:
                answer.text !== undefined ? Buffer.byteLength(answer.text) : (answer.body?.total ?? 0),
              httpVersion: req.httpVersion,
            }
          : undefined;
      recordCall(runtime, ctx, status, answeredAt, writtenAt, pieces);
    };

    /** An answer the proxy makes itself (fault, unreachable target): the request's body is read and dropped. */
    const answerOwn = async (answer: Answer) => {
      // Recorded once the body is in (or the client gone), so the journal learns what the request meant.
      const ended = req.readableEnded
        ? undefined
        : new Promise<void>((resolve) => {
            req.once('end', resolve);
            req.once('close', resolve);
            req.once('error', resolve);
          });
      req.on('data', (chunk: Buffer) => requestBody.add(chunk));
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

    if ((FAULT_TARGETS as readonly string[]).includes(operation)) {
      let fault: Answer | undefined;
      try {
        const struck = injectFault(runtime, ctx, operation as FaultTarget, ctx.note.agent);
        fault = struck instanceof Promise ? await struck : struck;
      } catch (error) {
        fault = respondError(ctx, error);
      }
      if (fault) return answerOwn(fault);
    }

    return new Promise<void>((resolve) => {
      const forwarded = endToEnd(requestHeaders, (lower) => lower === 'host');
      forwarded.unshift('Host', target.host);
      const out = upstream(request.method, req.url?.startsWith('/') ? req.url : request.path, forwarded);
      let answered = false;
      out.on('error', (error: NodeJS.ErrnoException) => {
        if (answered) return;
        answered = true;
        if (res.headersSent) {
          res.destroy();
          resolve();
          return;
        }
        const unreachable = new GatewayError('upstream_error', {
          message: `The target gateway could not be reached or broke off its answer (${error.code ?? error.message}); this answer is the proxy's.`,
          details: { proxy: true, target_error: error.code ?? 'unknown' },
        });
        ctx.note.fault = 'proxy:upstream';
        answerOwn(respondError(ctx, unreachable)).then(resolve, resolve);
      });
      req.on('data', (chunk: Buffer) => requestBody.add(chunk));
      req.pipe(out);
      // The client hung up before the answer was complete: the target's request is abandoned too.
      res.once('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      out.on('response', (up) => {
        answered = true;
        const answeredAt = performance.now();
        const status = up.statusCode ?? 502;
        const body = collector(Math.max(keep, status >= 400 || namedByThis || learns ? ANALYSED_BYTES : 0));
        // A flat [name, value, ...] list, as rawHeaders: order, spelling and repeats kept.
        res.writeHead(status, up.statusMessage, endToEnd(up.rawHeaders) as unknown as OutgoingHttpHeaders);
        up.on('data', (chunk: Buffer) => body.add(chunk));
        up.pipe(res);
        // When the last of the answer was handed to the client's socket (pipe ends the response on the
        // target's end, before this listener): as the gateway records it. 'finish' comes a turn later,
        // after the client may already have sent its next request.
        let writtenAt: number | undefined;
        up.once('end', () => {
          writtenAt = performance.now();
        });
        let done = false;
        const finish = (written: boolean) => {
          if (done) return;
          done = true;
          record(written ? status : 0, answeredAt, { raw: up.rawHeaders, body }, writtenAt);
          resolve();
        };
        res.once('finish', () => finish(true));
        res.once('close', () => finish(res.writableFinished));
        up.once('aborted', () => res.destroy());
        up.once('error', () => res.destroy());
      });
    });
  };

  return {
    gateway,
    target,
    config: gateway.config,
    handleNode,
    refuse: (error, request) => gateway.core.refuse(error, request),
    close: () => upstreamAgent.destroy(),
  };
}
