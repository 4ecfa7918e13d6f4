import type { IncomingMessage, ServerResponse } from 'node:http';
import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { GatewayError } from '../errors.ts';
import type { Gateway } from '../gateway.ts';
import type { Answer, CallContext, GatewayRequest } from '../http/context.ts';
import { requestIdFor } from '../http/request-id.ts';
import { respondError } from '../http/respond.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { capturedBytes } from '../journal/exchange-capture.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { isAdminPath } from '../routes/admin-schemas.ts';
import { routingPath } from '../routes/router.ts';
import { faultTargets } from '../scenarios/faults.ts';
import type { IsCredentialName } from '../secrets/credential-names.ts';
import { adminKeyGuard, warmUpWatch } from './admin-key-guard.ts';
import type { createAgentNames } from './agent-names.ts';
import { ANALYSED_BYTES, operationOf, toolNamed } from './exchange-notes.ts';
import { createExchangeRecord } from './exchange-record.ts';
import { type ForwardParts, forward } from './forward.ts';
import { type createLearnedKeys, faultArmedFor, TOKEN_OPERATION } from './learned-keys.ts';
import { answerOwn, type OwnExchange, writeOwn } from './own-answer.ts';
import type { ProxyDeadlines } from './proxy-options.ts';
import { cutOffFinding, failureAnswer } from './target-failures.ts';
import type { Upstream } from './upstream.ts';
import { adminKeyWatch, collector, endToEnd, withoutAdminKey } from './wire.ts';

/*
 * One exchange through the proxy, as its steps: the admin API served by the proxy's own gateway; the call's
 * context; the agent its token names; the proxy's own refusal of a URL carrying its admin key; a fault armed
 * on the proxy; else the request forwarded to the target and the answer streamed back. Each step's journal
 * facts go to the exchange's record (exchange-record.ts).
 */

type Runtime = Gateway['runtime'];
type MutableContext = { -readonly [K in keyof CallContext]: CallContext[K] };
type AgentNames = ReturnType<typeof createAgentNames>;
/** Resolves the naming of a token by the whoami that is this exchange (its own answer names the agent). */
type NamedByThis = ((name: string) => void) | undefined;

/** The call's context, as the gateway's stages have it: the operation, a request id, when it came. */
export function callContext(
  request: GatewayRequest,
  runtime: Runtime,
  operation: string,
  started = performance.now(),
): MutableContext {
  return {
    request,
    runtime,
    requestId: requestIdFor(undefined),
    note: { operation },
    at: runtime.clock.now(),
    started,
  } satisfies CallContext as MutableContext;
}

/**
 * Names the agent of a token in the call's notes. A token first seen on a GET whoami is named by that
 * whoami's own answer (returned: the resolver the record calls), so no extra request goes to the target
 * (which would count against the agent's rate limit there), unless an armed fault must know whose it is
 * before deciding (learned-keys.ts). Any other token is asked of the target once (agent-names.ts): then a
 * promise. No token: nothing, at once.
 */
export function nameAgent(
  names: AgentNames,
  runtime: Runtime,
  ctx: MutableContext,
  token: string | undefined,
): MaybePromise<NamedByThis> {
  if (!token) return undefined;
  ctx.note.token = tokenFingerprint(token);
  const operation = ctx.note.operation ?? 'other';
  const byAnswer = !names.byToken.get(token) && !faultArmedFor(runtime.faults.list(), operation);
  if (operation === 'whoami' && ctx.request.method === 'GET' && byAnswer) {
    let namedByThis: NamedByThis;
    names.byToken.set(
      token,
      new Promise<string>((resolve) => {
        namedByThis = resolve;
      }),
    );
    return namedByThis;
  }
  return names.of(token, ctx.request.connection?.id).then((agent) => {
    ctx.note.agent = agent;
    return undefined;
  });
}

/** The proxy's 400 for a request whose URL carries its admin key: never forwarded (nor journaled with it). */
export function adminKeyRefusal(ctx: MutableContext): Answer {
  ctx.note.fault = 'proxy:admin_key_in_url';
  return respondError(
    ctx,
    new GatewayError('invalid_request', {
      message:
        "The request's URL carries the proxy's admin key: it is not forwarded to the target. Send the key only in X-Admin-Key, to /__admin.",
      details: { proxy: true },
    }),
  );
}

/**
 * The answer of a fault armed on the proxy that strikes this call (its operation one of `targets`: the
 * endpoints and the tools of the proxy's config, extra ones included), or undefined.
 */
export function faultAnswer(
  runtime: Runtime,
  ctx: MutableContext,
  targets: ReadonlySet<string>,
): MaybePromise<Answer | undefined> {
  const operation = ctx.note.operation ?? 'other';
  if (!targets.has(operation)) return undefined;
  try {
    // Nothing armed: undefined at once, no promise (as the gateway's fault stage).
    const struck = injectFault(runtime, ctx, operation, ctx.note.agent);
    return struck instanceof Promise ? struck.catch((error: unknown) => respondError(ctx, error)) : struck;
  } catch (error) {
    return respondError(ctx, error);
  }
}

/** What forwarding one exchange needs beyond its own request and response. */
interface ForwardSetting {
  target: URL;
  upstream: Upstream;
  deadlines: ProxyDeadlines;
}

/**
 * The request forwarded to the target (its Host the target's, an absolute-form URL sent in origin form) and
 * the answer streamed back; the exchange recorded when answered, cut off, or answered by the proxy itself
 * because the target failed (target-failures.ts).
 */
export function forwardToTarget(
  setting: ForwardSetting,
  exchange: OwnExchange & { ctx: MutableContext; requestHeaders: readonly string[] },
  answerCapacity: (status: number) => number,
  /** The guard the request's body passes through on its way (admin-key-guard.ts), when the proxy has one. */
  bodyGuard?: ForwardParts['bodyGuard'],
): Promise<void> {
  const { req, res, ctx, record } = exchange;
  const { request } = ctx;
  const forwarded = endToEnd(exchange.requestHeaders, (lower) => lower === 'host');
  forwarded.unshift('Host', setting.target.host);
  return forward({
    req,
    res,
    out: setting.upstream.request(
      request.method,
      req.url?.startsWith('/') ? req.url : `${request.path}${request.query ? `?${request.query}` : ''}`,
      forwarded,
    ),
    deadlines: setting.deadlines,
    requestBody: exchange.requestBody,
    answerCapacity,
    onAbort: request.onAbort?.bind(request),
    answerTurn: request.answerTurn?.bind(request),
    ...(bodyGuard ? { bodyGuard } : {}),
    answered: ({ status, answeredAt, raw, body, writtenAt, writtenTurn, cutOff }) => {
      if (cutOff) {
        ctx.note.fault = `proxy:${cutOff.kind}`;
        ctx.note.findings = [cutOffFinding(cutOff)];
      }
      record(status, answeredAt, { raw, body }, writtenAt, writtenTurn);
    },
    failed: async (failure) => {
      // The agent hung up first: nothing to answer, the exchange is journaled as dropped.
      if (failure.kind === 'agent_gone') {
        ctx.note.fault = 'proxy:agent_gone';
        return record(0, performance.now(), { raw: [] });
      }
      const { error, fault, findings } =
        failure.kind === 'bad_request'
          ? { error: failure.error, fault: 'proxy:bad_request', findings: undefined }
          : failure.kind === 'body_refused'
            ? { ...failure, findings: undefined }
            : failureAnswer(failure);
      ctx.note.fault = fault;
      if (findings) ctx.note.findings = findings;
      if (res.destroyed) return record(0, performance.now(), { raw: [] });
      const answer = respondError(ctx, error);
      // The request's body is not all in (a target that took none of it): answered, then the connection is
      // closed (RFC 9112 section 9.6) rather than the rest read, so the exchange is journaled now.
      if (!req.complete) answer.headers = { ...answer.headers, connection: 'close' };
      return answerOwn(exchange, answer);
    },
  });
}

/** What the proxy's exchange handler is built from (proxy.ts). */
export interface ExchangeParts extends ForwardSetting {
  gateway: Gateway;
  names: AgentNames;
  keys: ReturnType<typeof createLearnedKeys>;
  adminKey: string | undefined;
  isCredential: IsCredentialName;
}

/**
 * The proxy's Node handler: each request through the steps above. The journal keeps `journal.body_bytes`
 * of each body, and reads more (`ANALYSED_BYTES`) of a tool call's or token request's body (its meaning),
 * and of an error answer, a whoami that names its token, or a token answer (what the findings judge).
 */
export function createExchangeHandler(parts: ExchangeParts) {
  const { gateway, names, keys, adminKey, isCredential } = parts;
  const { runtime } = gateway;
  const carriesAdminKey = adminKeyWatch(adminKey);
  if (adminKey !== undefined) warmUpWatch(carriesAdminKey);
  // The proxy's tools are its config's, fixed for its life (a scenario changes tools' policies only).
  const targets = new Set(faultTargets(runtime.tools));

  const serveAdmin = async (request: GatewayRequest, res: ServerResponse) => {
    const answer = await gateway.core.handle(request);
    answer.record(await writeOwn(res, answer));
  };

  return async (request: GatewayRequest, req: IncomingMessage, res: ServerResponse) => {
    const path = routingPath(request.path);
    if (adminKey && isAdminPath(path)) return serveAdmin(request, res);
    // A URL that carries the proxy's admin key is not forwarded (nor journaled with it).
    const leaksKey = carriesAdminKey(req.url ?? '');
    if (leaksKey) request = Object.create(request, { path: { value: '/[REDACTED]' }, query: { value: '' } });
    const started = performance.now();
    const operation = operationOf(path, runtime.tools);
    const ctx = callContext(request, runtime, operation, started);
    const token = request.header(IDENTITY_HEADER_KEY)?.trim() || undefined;
    const naming = nameAgent(names, runtime, ctx, token);
    const namedByThis = naming instanceof Promise ? await naming : naming;
    const keep = runtime.config.journal.body_bytes;
    const learns = operation === TOKEN_OPERATION;
    const requestBody = collector(
      Math.max(capturedBytes(keep), toolNamed(runtime.tools, operation) || learns ? ANALYSED_BYTES : 0),
    );
    // The proxy's own credentials are neither forwarded nor journaled.
    const requestHeaders = adminKey ? withoutAdminKey(req.rawHeaders, carriesAdminKey) : req.rawHeaders;
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
      onRecord: (status, responseText) => {
        const mint = keys.onRecord(ctx, token, {
          operation,
          status,
          request: requestBody,
          answer: responseText,
        });
        // A token minted through the proxy is its agent's from then on, whatever the target says of it later.
        if (mint && !names.byToken.get(mint.token))
          names.byToken.set(mint.token, Promise.resolve(mint.agent));
      },
    });
    const exchange = { req, res, ctx, requestBody, requestHeaders, record };

    if (leaksKey) return answerOwn(exchange, adminKeyRefusal(ctx));
    const striking = faultAnswer(runtime, ctx, targets);
    const fault = striking instanceof Promise ? await striking : striking;
    if (fault) return answerOwn(exchange, fault);
    return forwardToTarget(
      parts,
      exchange,
      (status) => Math.max(capturedBytes(keep), status >= 400 || namedByThis || learns ? ANALYSED_BYTES : 0),
      // Nor is it forwarded in a body: the body passes through the guard's scan on its way.
      adminKey === undefined
        ? undefined
        : (refuse) =>
            adminKeyGuard({
              carries: carriesAdminKey,
              adminKey,
              contentEncoding: request.header('content-encoding'),
              contentType: request.header('content-type'),
              maxBodyBytes: runtime.config.server.max_body_bytes,
              refuse,
            }),
    );
  };
}
