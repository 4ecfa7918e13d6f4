import { Hono } from 'hono';
import { createClock, type VirtualClock } from './clock.ts';
import { loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { errorToResponse, GatewayError } from './errors.ts';
import { createAgentRegistry } from './identity/agent-registry.ts';
import { createIdentityProvider } from './identity/identity-provider.ts';
import { createLocalVerifier, type IdentityVerifier } from './identity/verifier.ts';
import { requestIdFor } from './pipeline/request-id.ts';
import { createPolicy } from './policy/policy.ts';
import { registerGatewayRoutes } from './routes/gateway-routes.ts';
import { registerIdpRoutes } from './routes/idp-routes.ts';
import { loadCorpus } from './tools/corpus.ts';
import { createFixtureFetchProvider, type FetchProvider } from './tools/web-fetch.ts';
import { createFixtureSearchProvider, type SearchProvider } from './tools/web-search.ts';

/** Per-request values shared by the pipeline stages. */
export type AppEnv = { Variables: { requestId: string } };

export interface GatewayOptions {
  /** A config object laid over the bundled default, or one already returned by `loadConfig`. */
  config?: GatewayConfigOverlay | ResolvedConfig;
  /** A YAML or JSON config file laid over the bundled default. */
  configFile?: string;
  /** The clock behind every decision; defaults to real time (a virtual clock that is not frozen). */
  clock?: VirtualClock;
  /** How tokens are verified; defaults to the in-process identity provider. */
  verifier?: IdentityVerifier;
  /** Serve the simulated identity provider under /idp (default: true unless a verifier is given). */
  serveIdentityProvider?: boolean;
  searchProvider?: SearchProvider;
  fetchProvider?: FetchProvider;
  /** Where internal errors are logged (default: stderr). */
  log?: (line: string) => void;
}

const isResolved = (config: GatewayOptions['config']): config is ResolvedConfig =>
  typeof config === 'object' && config !== null && 'source' in config;

/**
 * Creates the reference gateway: one web-standard `fetch(request)` handler plus the state behind it.
 * Every adapter (Node server, msw handlers, tests) calls this same `fetch`.
 *
 * @example
 * const gateway = createGateway();
 * const token = gateway.mintToken('agent-verified');
 * const res = await gateway.fetch(new Request('http://gw.test/v1/whoami', { headers: { 'X-Agent-Identity': token } }));
 */
export function createGateway(options: GatewayOptions = {}) {
  const config = isResolved(options.config)
    ? options.config
    : loadConfig({ file: options.configFile, config: options.config });
  const clock = options.clock ?? createClock();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const registry = createAgentRegistry(config.agents);
  const idp = createIdentityProvider({
    registry,
    clock,
    signingSecret: config.identity.signing_secret,
    issuer: config.identity.issuer,
    ttlSeconds: config.identity.token_ttl_seconds,
  });
  const verifier = options.verifier ?? createLocalVerifier(idp);
  const policy = createPolicy(structuredClone(config.tools));
  const corpus = loadCorpus(config.corpus);
  const search = options.searchProvider ?? createFixtureSearchProvider(corpus, config.corpus.seed);
  const fetchPage = options.fetchProvider ?? createFixtureFetchProvider(corpus, config.corpus.seed);

  const app = new Hono<AppEnv>();
  app.use((c, next) => {
    // Every response carries it: JSON ones through jsonResponse, errors through GatewayError.toResponse.
    c.set('requestId', requestIdFor(c.req.raw.headers));
    return next();
  });
  registerGatewayRoutes(app, { config, clock, verifier, policy, search, fetchPage });
  if (options.serveIdentityProvider ?? !options.verifier) registerIdpRoutes(app, { idp, config });
  app.notFound((c) =>
    new GatewayError('not_found', {
      message: `No endpoint at ${c.req.method} ${c.req.path}. Endpoints: GET /v1/health, GET /v1/whoami, POST /v1/web/search, POST /v1/web/fetch.`,
    }).toResponse(c.get('requestId')),
  );
  app.onError((error, c) => errorToResponse(error, c.get('requestId'), log));

  return {
    /** The gateway as a web-standard handler. */
    fetch: (request: Request): Promise<Response> => Promise.resolve(app.fetch(request)),
    config,
    clock,
    registry,
    idp,
    policy,
    corpus,
    /** Mints a token for an agent of the registry (what `agent-gateway token` does). */
    mintToken: (agentId: string): string => idp.mintForAgent(agentId).token,
  };
}

export type Gateway = ReturnType<typeof createGateway>;
