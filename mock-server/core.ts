import { IDENTITY_HEADER_KEY } from '../vocabulary/identity-header.ts';
import { GatewayError } from './errors.ts';
import type { Answer, CallContext, GatewayRequest, GatewayResponse } from './http/context.ts';
import { requestIdFor } from './http/request-id.ts';
import { respondError } from './http/respond.ts';
import type { MaybePromise } from './maybe-promise.ts';
import { registerOpenApiRoute } from './openapi/openapi-route.ts';
import { recordCall } from './pipeline/record.ts';
import { noteTurns, turnIfAnsweredAtOnce } from './pipeline/turn-facts.ts';
import { type AdminControl, registerAdminRoutes, requireAdminKey } from './routes/admin-routes.ts';
import { ADMIN_PREFIX, isAdminPath } from './routes/admin-schemas.ts';
import { isDashboardAsset, registerDashboardRoutes } from './routes/dashboard-routes.ts';
import { registerGatewayRoutes } from './routes/gateway-routes.ts';
import { registerIdpRoutes } from './routes/idp-routes.ts';
import { publicEndpoints } from './routes/route-index.ts';
import { servedRoutes } from './routes/route-table.ts';
import { methodNotAllowed, routerFromTable, routingPath } from './routes/router.ts';
import { extraToolRoutes } from './routes/tool-routes.ts';
import type { Runtime } from './runtime.ts';

/** The platform-free core: a request record in, a response record out. Every adapter calls `handle`. */
export interface GatewayCore {
  handle(request: GatewayRequest): Promise<GatewayResponse>;
  /**
   * `handle`, with the answer at once when the pipeline gives it at once (in memory every stage does): no
   * promise and no tick on the hot path of an adapter that can write it then (node:http).
   */
  answer(request: GatewayRequest): MaybePromise<GatewayResponse>;
  /**
   * The JSON error answer for what the adapter refuses before the pipeline: a request it will not serve (a
   * connection over its client's cap; journaled like any other), or bytes that never became a request (an
   * HTTP parser error, a stalled connection: no request, so nothing to journal). Same format, request id and
   * gateway-clock `Date` as every other answer.
   */
  refuse(error: GatewayError, request?: GatewayRequest): GatewayResponse;
}

/** The record stage of one answer, for its adapter to call once the answer is written. */
const recorder =
  (runtime: Runtime, ctx: CallContext, answer: Answer, answeredAt: number) =>
  (writtenAt: number, encodedBody?: Uint8Array) => {
    if (ctx.request.readTurn !== undefined || ctx.request.readStalls !== undefined)
      noteTurns(ctx, turnIfAnsweredAtOnce(ctx.request));
    recordCall(runtime, ctx, answer.drop ? 0 : answer.status, answeredAt, writtenAt, answer, encodedBody);
  };

/**
 * The request's id: the caller's `X-Request-Id` when it is plain and holds nothing the client report's
 * secret scan would call a secret (a token's signature, an API key), else a fresh UUID. A secret is neither
 * echoed (proxies log response headers) nor journaled. The scan runs only when the header is sent.
 */
function requestIdOf(request: GatewayRequest, runtime: Runtime): string {
  const given = request.header('x-request-id');
  if (given === undefined) return requestIdFor(undefined);
  const token = request.header(IDENTITY_HEADER_KEY)?.trim() || undefined;
  return runtime.scanSecrets(given, { token }).kinds.length > 0
    ? requestIdFor(undefined)
    : requestIdFor(given);
}

const NOT_RECORDED = () => {};

/** The spec's endpoints, as a 404 outside the admin API names them (a config's extra tools are not the spec's). */
const PUBLIC_ENDPOINTS = publicEndpoints(servedRoutes());

/**
 * Builds the core over a runtime: the /v1 endpoints, the simulated identity provider (unless tokens are
 * verified elsewhere) and, with an admin key, the admin API. Per request: request id, route (404, 405 with
 * Allow; the admin key first on admin paths), the route's stages, errors mapped to JSON answers, and the
 * record stage once the adapter wrote the answer. Admin calls are never journaled.
 */
export function createCore(
  runtime: Runtime,
  options: { serveIdentityProvider: boolean; admin?: AdminControl },
): GatewayCore {
  const { admin } = options;
  const parts = {
    identityProvider: options.serveIdentityProvider,
    admin: Boolean(admin),
    extraTools: extraToolRoutes(runtime.tools),
  };
  // The served part of the route table, each route's handler bound by id; built once.
  const router = routerFromTable(servedRoutes(parts), (routes) => {
    registerGatewayRoutes(routes, runtime);
    if (options.serveIdentityProvider) registerIdpRoutes(routes, runtime);
    if (admin) {
      registerAdminRoutes(routes, admin);
      registerDashboardRoutes(routes);
    }
    registerOpenApiRoute(routes, parts);
  });

  /** The route's answer (or its promise); throws 404, 405 (with Allow) and, on admin paths, 401/403 first. */
  const route = (ctx: CallContext, path: string, adminCall: boolean): MaybePromise<Answer> => {
    const { method } = ctx.request;
    // The dashboard's static files load without the key (the page asks for it); nothing else under /__admin.
    if (adminCall && admin && !isDashboardAsset(method, path)) requireAdminKey(ctx, admin.adminKey);
    const match = router.match(method, path);
    if (match?.handler) return match.handler(ctx, match.params);
    if (match) throw methodNotAllowed(method, path, match.allow);
    throw new GatewayError('not_found', {
      message: `No endpoint at ${method} ${path}. ${adminCall && admin ? `GET ${ADMIN_PREFIX} lists the admin endpoints.` : PUBLIC_ENDPOINTS}`,
    });
  };

  return {
    refuse(error, request) {
      const note: CallContext['note'] = {};
      const requestId = request ? requestIdOf(request, runtime) : requestIdFor(undefined);
      const response = respondError({ runtime, requestId, note }, error) as GatewayResponse;
      if (!request) response.record = NOT_RECORDED;
      else {
        const started = performance.now();
        const ctx: CallContext = {
          request,
          runtime,
          requestId,
          note,
          at: runtime.clock.now(),
          epoch: runtime.clock.epoch,
          started,
        };
        response.record = recorder(runtime, ctx, response, started);
      }
      return response;
    },

    handle: async (request) => answer(request),
    answer,
  };

  function answer(request: GatewayRequest): MaybePromise<GatewayResponse> {
    const started = performance.now();
    const ctx: CallContext = {
      request,
      runtime,
      requestId: requestIdOf(request, runtime),
      note: {},
      at: runtime.clock.now(),
      epoch: runtime.clock.epoch,
      started,
      token: undefined,
    };
    const path = routingPath(request.path);
    const adminCall = isAdminPath(path);
    const done = (answered: Answer) => {
      const response = answered as GatewayResponse;
      response.record = adminCall ? NOT_RECORDED : recorder(runtime, ctx, answered, performance.now());
      return response;
    };
    let routed: MaybePromise<Answer>;
    try {
      routed = route(ctx, path, adminCall);
    } catch (error) {
      return done(respondError(ctx, error));
    }
    return routed instanceof Promise
      ? routed.then(done, (error: unknown) => done(respondError(ctx, error)))
      : done(routed);
  }
}
