import { Hono } from 'hono';
import { createClock, type VirtualClock } from './clock.ts';
import { ConfigError, deepMerge, loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { errorToResponse, GatewayError } from './errors.ts';
import type { IdentityVerifier } from './identity/verifier.ts';
import type { JournalNote } from './journal.ts';
import { requestIdFor } from './pipeline/request-id.ts';
import { ADMIN_PREFIX, registerAdminRoutes } from './routes/admin-routes.ts';
import { registerGatewayRoutes } from './routes/gateway-routes.ts';
import { registerIdpRoutes } from './routes/idp-routes.ts';
import { applyConfig, createRuntime, type Runtime } from './runtime.ts';
import { loadScenario, parseScenario, type Scenario, type ScenarioInput } from './scenarios.ts';
import { loadCorpus } from './tools/corpus.ts';
import { createFixtureFetchProvider, type FetchProvider } from './tools/web-fetch.ts';
import { createFixtureSearchProvider, type SearchProvider } from './tools/web-search.ts';

/** Per-request values shared by the pipeline stages. */
export type AppEnv = { Variables: { requestId: string; note: JournalNote } };

export interface GatewayOptions {
  /** A config object laid over the bundled default, or one already returned by `loadConfig`. */
  config?: GatewayConfigOverlay | ResolvedConfig;
  /** A YAML or JSON config file laid over the bundled default. */
  configFile?: string;
  /** A scenario (bundled name, file path or object) applied at start. */
  scenario?: string | ScenarioInput;
  /** The clock behind every decision; defaults to real time (a virtual clock that is not frozen). */
  clock?: VirtualClock;
  /** How tokens are verified; defaults to the in-process identity provider. */
  verifier?: IdentityVerifier;
  /** Serve the simulated identity provider under /idp (default: true unless a verifier is given). */
  serveIdentityProvider?: boolean;
  /** Enables the admin API under /__admin; every call must send this key. Without it, /__admin is a 404. */
  adminKey?: string;
  searchProvider?: SearchProvider;
  fetchProvider?: FetchProvider;
  /** Where internal errors are logged (default: stderr). */
  log?: (line: string) => void;
}

const isResolved = (config: GatewayOptions['config']): config is ResolvedConfig =>
  typeof config === 'object' && config !== null && 'source' in config;

const withoutSource = ({ source: _source, ...config }: ResolvedConfig) => config as GatewayConfigOverlay;

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
  // What a scenario is laid over: the caller's file and overlay (or resolved config).
  const base: { file?: string; config?: GatewayConfigOverlay } = isResolved(options.config)
    ? { config: withoutSource(options.config) }
    : { file: options.configFile, config: options.config };
  const baseConfig = isResolved(options.config) ? options.config : loadConfig(base);
  const clock = options.clock ?? createClock();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const corpus = loadCorpus(baseConfig.corpus);
  const runtime: Runtime = createRuntime(baseConfig, {
    clock,
    corpus,
    search: options.searchProvider ?? createFixtureSearchProvider(corpus, baseConfig.corpus.seed),
    fetchPage: options.fetchProvider ?? createFixtureFetchProvider(corpus, baseConfig.corpus.seed),
    verifier: options.verifier,
    log,
  });
  let scenario: Scenario | undefined;

  /** Back to the base config: agents, tools, limits, faults, idempotency keys and the journal start over. */
  const reset = () => {
    applyConfig(runtime, baseConfig);
    runtime.faults.clear();
    runtime.journal.clear();
    scenario = undefined;
  };

  /** Resets, then lays the scenario over the base config, arms its faults and sets its clock. */
  const useScenario = (input: string | ScenarioInput) => {
    const next = typeof input === 'string' ? loadScenario(input) : parseScenario(input);
    let config: ResolvedConfig;
    try {
      config = loadConfig({
        file: base.file,
        config: deepMerge(base.config ?? {}, next.config) as GatewayConfigOverlay,
      });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new ConfigError(
        next.source,
        error.issues.map((i) => ({ path: `config.${i.path}`, message: i.message })),
      );
    }
    reset();
    applyConfig(runtime, { ...config, source: `${baseConfig.source}, with scenario ${next.source}` });
    for (const fault of next.faults) runtime.faults.add(fault);
    if (next.clock) {
      clock.reset();
      if (next.clock.start) clock.set(Date.parse(next.clock.start));
      if (next.clock.frozen) clock.freeze();
    }
    scenario = next;
    return next;
  };
  if (options.scenario) useScenario(options.scenario);

  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const requestId = requestIdFor(c.req.raw.headers);
    c.set('requestId', requestId);
    const note: JournalNote = {};
    c.set('note', note);
    if (c.req.path.startsWith(ADMIN_PREFIX)) return next();
    const at = clock.now();
    const started = performance.now();
    await next();
    const { operation = 'other', ...learned } = note;
    runtime.journal.record({
      request_id: requestId,
      at,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      method: c.req.method,
      path: c.req.path,
      operation,
      status: c.res.status,
      ...learned,
    });
  });
  registerGatewayRoutes(app, runtime);
  if (options.serveIdentityProvider ?? !options.verifier) registerIdpRoutes(app, runtime);
  if (options.adminKey) {
    registerAdminRoutes(app, {
      runtime,
      adminKey: options.adminKey,
      reset,
      useScenario,
      scenario: () => scenario,
    });
  }
  const answer = (c: { get(key: 'note'): JournalNote; get(key: 'requestId'): string }, error: unknown) => {
    if (error instanceof GatewayError) c.get('note').code = error.code;
    return errorToResponse(error, c.get('requestId'), log);
  };
  app.notFound((c) =>
    answer(
      c,
      new GatewayError('not_found', {
        message: `No endpoint at ${c.req.method} ${c.req.path}. Endpoints: GET /v1/health, GET /v1/whoami, POST /v1/web/search, POST /v1/web/fetch.`,
      }),
    ),
  );
  app.onError((error, c) => answer(c, error));

  return {
    /** The gateway as a web-standard handler. */
    fetch: (request: Request): Promise<Response> => Promise.resolve(app.fetch(request)),
    runtime,
    get config(): ResolvedConfig {
      return runtime.config;
    },
    clock,
    registry: runtime.registry,
    idp: runtime.idp,
    policy: runtime.policy,
    corpus,
    journal: runtime.journal,
    faults: runtime.faults,
    reset,
    useScenario,
    /** The scenario in force, if any. */
    get scenario(): Scenario | undefined {
      return scenario;
    },
    /** Mints a token for an agent of the registry (what `agent-gateway token` does). */
    mintToken: (agentId: string): string => runtime.idp.mintForAgent(agentId).token,
  };
}

export type Gateway = ReturnType<typeof createGateway>;
