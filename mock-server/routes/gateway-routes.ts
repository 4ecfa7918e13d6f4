import type { Hono } from 'hono';
import type { ZodType } from 'zod';
import type { Clock } from '../clock.ts';
import type { ResolvedConfig } from '../config/load-config.ts';
import type { ToolName } from '../config/schema.ts';
import type { AppEnv } from '../gateway.ts';
import type { IdentityVerifier } from '../identity/verifier.ts';
import { jsonResponse } from '../json-response.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import { readJsonBody } from '../pipeline/read-json-body.ts';
import type { Policy } from '../policy/policy.ts';
import { type FetchProvider, fetchRequestSchema } from '../tools/web-fetch.ts';
import { type SearchProvider, searchRequestSchema } from '../tools/web-search.ts';
import { methodNotAllowed } from './method-not-allowed.ts';

export interface GatewayRouteDeps {
  config: ResolvedConfig;
  clock: Clock;
  verifier: IdentityVerifier;
  policy: Policy;
  search: SearchProvider;
  fetchPage: FetchProvider;
}

const NO_STORE = { 'cache-control': 'no-store' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The /v1 endpoints of spec section 4. Each follows the pipeline: route (404/405) -> identity (401) ->
 * policy (403) -> body (400/413/415) -> tool. Health is answered before identity, so no token (and no
 * bad token) changes it.
 */
export function registerGatewayRoutes(app: Hono<AppEnv>, deps: GatewayRouteDeps) {
  const { config, clock, verifier, policy } = deps;
  const maxBody = config.server.max_body_bytes;

  app.get('/v1/health', (c) =>
    jsonResponse(
      { status: 'ok', version: 'v1', time: new Date(clock.now()).toISOString() },
      { requestId: c.get('requestId'), headers: NO_STORE },
    ),
  );
  methodNotAllowed(app, '/v1/health', ['GET']);

  app.get('/v1/whoami', async (c) => {
    const identity = await authenticate(c.req.raw, verifier);
    const now = clock.now();
    return jsonResponse(
      {
        agent: { id: identity.agentId, name: identity.name },
        tier: identity.tier,
        tools: policy.allowedTools(identity),
        token: {
          issued_at: new Date(identity.issuedAt).toISOString(),
          expires_at: new Date(identity.expiresAt).toISOString(),
          expires_in_seconds: Math.max(0, Math.floor((identity.expiresAt - now) / 1000)),
        },
      },
      { requestId: c.get('requestId'), headers: NO_STORE },
    );
  });
  methodNotAllowed(app, '/v1/whoami', ['GET']);

  const toolRoute = <T>(tool: ToolName, path: string, schema: ZodType<T>, run: (body: T) => unknown) => {
    app.post(path, async (c) => {
      const identity = await authenticate(c.req.raw, verifier);
      policy.authorize(identity, tool);
      const body = await readJsonBody(c.req.raw, schema, maxBody);
      const latency = policy.tools[tool].latency_ms;
      if (latency > 0) await sleep(latency);
      return jsonResponse(await run(body), { requestId: c.get('requestId'), headers: NO_STORE });
    });
    methodNotAllowed(app, path, ['POST']);
  };
  toolRoute('web.search', '/v1/web/search', searchRequestSchema, (body) => deps.search.search(body));
  toolRoute('web.fetch', '/v1/web/fetch', fetchRequestSchema, (body) => deps.fetchPage.fetch(body));
}
