import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ENDPOINTS, type JournalOperation } from '../../spec/endpoints.ts';
import { IDENTITY_HEADER_KEY } from '../../spec/identity-header.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../spec/retry-after.ts';
import { TOOL_NAMES, TOOLS } from '../../spec/tools.ts';
import type { NodeHandler } from '../adapters/node-server.ts';
import { createBoundedMap } from '../bounded-map.ts';
import { requestKey } from '../client-report/request-meaning.ts';
import type { VirtualClock } from '../clock.ts';
import type { GatewayConfigOverlay } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import { journalFingerprint } from '../hash.ts';
import type { Answer, CallContext, GatewayRequest, GatewayResponse } from '../http/context.ts';
import { requestIdFor } from '../http/request-id.ts';
import { respondError } from '../http/respond.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { bodyStart, type ExchangePieces } from '../journal/exchange-capture.ts';
import type { TargetErrorCode } from '../journal/journal.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { noteOutgoingText } from '../pipeline/outgoing-text.ts';
import { recordCall } from '../pipeline/record.ts';
import { ADMIN_PREFIX } from '../routes/admin-routes.ts';
import { routingPath } from '../routes/router.ts';
import { FAULT_TARGETS, type FaultTarget } from '../scenarios/faults.ts';
import { judgeAnswer } from './findings.ts';

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
}

/** Hop-by-hop headers (RFC 9110 section 7.6.1), never forwarded either way; plus Expect, which this hop answered. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

// The endpoints the proxy names by path (the instruction page by its prefix, below; anything else is other).
const OPERATIONS: ReadonlyMap<string, JournalOperation> = new Map(
  (['health', 'whoami', ...TOOL_NAMES, 'idp.token', 'idp.verify'] as const).map((id) => [
    ENDPOINTS[id].path,
    id,
  ]),
);
const TOOL_FIELD: Readonly<Record<string, 'query' | 'url'>> = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, TOOLS[tool].field]),
);
/** Bytes of a request body read for its meaning (fingerprint, key, query/url), and of an error body judged. */
const ANALYSED_BYTES = 65_536;

const operationOf = (path: string): JournalOperation =>
  OPERATIONS.get(path) ?? (path === '/idp/auth' || path.startsWith('/idp/auth.') ? 'idp.auth' : 'other');

/** Raw header pairs without hop-by-hop ones (and those the Connection header names). */
function endToEnd(raw: readonly string[], drop?: (lower: string) => boolean): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === 'connection')
      for (const token of (raw[i + 1] as string).split(',')) named.add(token.trim().toLowerCase());
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = (raw[i] as string).toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower) || drop?.(lower)) continue;
    out.push(raw[i] as string, raw[i + 1] as string);
  }
  return out;
}

const headerOf = (raw: readonly string[], name: string): string | undefined => {
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) return raw[i + 1];
  return undefined;
};

/** Collects the first `max` bytes of a stream's chunks, counting all of them. */
function collector(max: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    add(chunk: Buffer) {
      total += chunk.length;
      if (kept >= max) return;
      const part = kept + chunk.length <= max ? chunk : chunk.subarray(0, max - kept);
      chunks.push(part);
      kept += part.length;
    },
    get total() {
      return total;
    },
    /** What was kept; `whole` when it is all of it. */
    bytes: () => Buffer.concat(chunks, kept),
    get whole() {
      return kept === total;
    },
  };
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
  const secure = target.protocol === 'https:';
  const upstreamAgent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const basePath = target.pathname.replace(/\/+$/, '');
  const whoamiTimeout = options.whoamiTimeoutMs ?? 5000;
  // Token -> agent name, bounded; the token lives only here, in memory, as the key.
  const agents = createBoundedMap<string, Promise<string>>(10_000);

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

  // Connection id -> the agent whose accepted token it last carried (bounded).
  const connectionAgents = createBoundedMap<number, string>(16_384);

  /**
   * The agent id the target's whoami gives for the token. A token it refuses (expired, revoked) is the
   * agent's that last used this connection with a token the target accepted: an HTTP/1.1 connection is one
   * client's, and that is how the report sees an agent resend its expired token. Else a stable fingerprint
   * of the token (`tok_...`).
   */
  const askWhoami = (token: string, connection: number | undefined): Promise<string> =>
    new Promise((resolve) => {
      const fallback =
        (connection !== undefined && connectionAgents.get(connection)) || tokenFingerprint(token);
      const req = upstream(ENDPOINTS.whoami.method, ENDPOINTS.whoami.path, {
        host: target.host,
        [IDENTITY_HEADER_KEY]: token,
        accept: 'application/json',
      });
      req.setTimeout(whoamiTimeout, () => req.destroy());
      req.on('error', () => resolve(fallback));
      req.on('response', (res) => {
        const body = collector(ANALYSED_BYTES);
        res.on('data', (chunk: Buffer) => body.add(chunk));
        res.on('error', () => resolve(fallback));
        res.on('end', () =>
          resolve(
            res.statusCode && res.statusCode < 300 && body.whole
              ? (agentIdOf(body.bytes().toString('utf8')) ?? fallback)
              : fallback,
          ),
        );
      });
      req.end();
    });

  const agentOf = (token: string, connection: number | undefined): Promise<string> => {
    let known = agents.get(token);
    if (!known) {
      known = askWhoami(token, connection);
      agents.set(token, known);
    }
    return known;
  };

  /** Writes an answer the proxy makes itself (admin API, fault, unreachable target). */
  /** Resolves, once written, with when it was handed to the socket (what the journal records). */
  const writeOwn = (res: ServerResponse, answer: GatewayResponse | Answer): Promise<number> =>
    new Promise((resolve) => {
      if (answer.drop) {
        res.req.socket.destroy();
        resolve(performance.now());
        return;
      }
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-length': String(Buffer.byteLength(answer.body)),
      });
      res.end(answer.body);
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
    if (options.adminKey && (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)))
      return serveAdmin(request, res);
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
      if (operation === 'whoami' && request.method === 'GET' && !agents.get(token))
        agents.set(
          token,
          new Promise<string>((resolve) => {
            namedByThis = resolve;
          }),
        );
      else ctx.note.agent = await agentOf(token, request.connection?.id);
    }
    const keep = bodyBytes();
    const requestBody = collector(Math.max(keep, TOOL_FIELD[operation] ? ANALYSED_BYTES : 0));
    const requestHeaders = req.rawHeaders;

    /** The journal entry, once the answer is written (or the connection is gone). */
    const record = (
      status: number,
      answeredAt: number,
      answer: { raw: readonly string[]; body?: ReturnType<typeof collector>; text?: string },
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
          (connection !== undefined && connectionAgents.get(connection)) ||
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
        connectionAgents.set(request.connection.id, note.agent);
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
        const body = collector(Math.max(keep, status >= 400 || namedByThis ? ANALYSED_BYTES : 0));
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

/** The agent id in a whoami body, whatever the gateway names the field (the spec does not show it). */
export function agentIdOf(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  for (const holder of [record.agent, record.identity, record.caller, record]) {
    if (typeof holder !== 'object' || holder === null) continue;
    const h = holder as Record<string, unknown>;
    for (const key of ['id', 'agent_id', 'agentId', 'sub', 'client_id', 'name'])
      if (typeof h[key] === 'string' && h[key] !== '' && (h[key] as string).length <= 200)
        return h[key] as string;
  }
  if (typeof record.agent === 'string' && record.agent !== '') return record.agent;
  return undefined;
}

const codeOf = (text: string | undefined): string | undefined => {
  if (text === undefined) return undefined;
  try {
    const body = JSON.parse(text) as { code?: unknown };
    return typeof body?.code === 'string' && body.code.length <= 100 ? body.code : undefined;
  } catch {
    return undefined;
  }
};

/** What the journal learns of a request from its body: as the gateway's tool stages note it. */
function noteRequest(
  ctx: CallContext,
  operation: JournalOperation,
  body: ReturnType<typeof collector>,
): void {
  const field = TOOL_FIELD[operation];
  if (operation === 'whoami') ctx.note.request_fingerprint = journalFingerprint('whoami');
  if (!field) return;
  const bytes = body.bytes();
  ctx.note.request_fingerprint = body.whole
    ? journalFingerprint(operation, bytes)
    : journalFingerprint(operation);
  if (!body.whole) return;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const text = (value as Record<string, unknown>)[field];
  if (typeof text !== 'string') return;
  ctx.note.request_key = requestKey(operation, value as Record<string, unknown>);
  noteOutgoingText(ctx, { agentId: ctx.note.agent } as Identity, field, text);
}
