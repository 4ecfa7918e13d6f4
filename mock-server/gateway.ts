import { Hono } from 'hono';
import { type ClientReport, createClientReport } from './client-report/report.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import { createClock, type VirtualClock } from './clock.ts';
import { ConfigError, deepMerge, loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { errorToResponse, GatewayError } from './errors.ts';
import type { IdentityVerifier } from './identity/verifier.ts';
import type { JournalNote } from './journal.ts';
import { IDENTITY_HEADER } from './pipeline/authenticate.ts';
import { requestIdFor } from './pipeline/request-id.ts';
import { ADMIN_PREFIX, registerAdminRoutes } from './routes/admin-routes.ts';
import { registerGatewayRoutes } from './routes/gateway-routes.ts';
import { registerIdpRoutes } from './routes/idp-routes.ts';
import { createMethodTable } from './routes/method-not-allowed.ts';
import { applyConfig, createRuntime, type Runtime } from './runtime.ts';
import { loadScenario, parseScenario, type Scenario, type ScenarioInput } from './scenarios.ts';
import { loadCorpus } from './tools/corpus.ts';
import { createFixtureFetchProvider, type FetchProvider } from './tools/web-fetch.ts';
import { createFixtureSearchProvider, type SearchProvider } from './tools/web-search.ts';

/**
 * Per-request values shared by the pipeline stages, passed as Hono's `env` by the gateway's fetch wrapper
 * (not set by a middleware: that would put every request on Hono's slower multi-handler path).
 */
/** Per-request state the routes share: the request id, what the journal learns, and whether it is an admin call. */
export type AppEnv = { Bindings: { requestId: string; note: JournalNote; admin: boolean } };

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

/** The path of a request URL without parsing it (`new URL` costs a microsecond on the hot path). */
const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  return url.slice(start, query === -1 ? undefined : query);
};

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
  const resetToBase = () => {
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
    resetToBase();
    applyConfig(runtime, { ...config, source: `${baseConfig.source}, with scenario ${next.source}` });
    for (const fault of next.faults) runtime.faults.add(fault);
    if (next.clock) {
      clock.reset();
      // Frozen first: set on a running clock, then frozen, it would stop a moment past the start.
      if (next.clock.frozen) clock.freeze();
      if (next.clock.start) clock.set(Date.parse(next.clock.start));
    }
    scenario = next;
    return next;
  };
  if (options.scenario) useScenario(options.scenario);
  /**
   * Back to how the gateway started: its config, and the scenario it was created with (`serve --scenario`),
   * which QA resets to between runs. A scenario loaded later is dropped.
   */
  const reset = () => {
    if (options.scenario) useScenario(options.scenario);
    else resetToBase();
  };

  const app = new Hono<AppEnv>();
  const methods = createMethodTable();
  registerGatewayRoutes(app, runtime, methods);
  if (options.serveIdentityProvider ?? !options.verifier) registerIdpRoutes(app, runtime, methods);
  /**
   * Grades an agent against the spec's client safety rules, from the journal. An agent the gateway neither
   * knows nor journaled is a mistake (a typo), not an agent that did nothing: 404 not_found.
   */
  const clientReport = (agent: string, reportOptions?: Partial<ClientReportOptions>): ClientReport => {
    const entries = runtime.journal.list({ agent });
    if (!runtime.registry.get(agent) && entries.length === 0) {
      const known = runtime.registry.list().map((a) => a.id);
      throw new GatewayError('not_found', {
        message: `No agent "${agent}" and no request from it in the journal. Agents: ${known.join(', ')}.`,
      });
    }
    return createClientReport({
      agent,
      entries,
      rateLimitRules: runtime.config.rate_limits.rules,
      corpus,
      options: reportOptions,
      dropped: runtime.journal.dropped,
    });
  };
  if (options.adminKey) {
    registerAdminRoutes(
      app,
      {
        runtime,
        adminKey: options.adminKey,
        reset,
        useScenario,
        scenario: () => scenario,
        clientReport,
      },
      methods,
    );
  }
  const answer = (env: AppEnv['Bindings'], error: unknown) => {
    if (error instanceof GatewayError) env.note.code = error.code;
    return errorToResponse(error, env.requestId, log);
  };
  app.notFound((c) => {
    const wrongMethod = methods.error(c.req.method, c.req.path);
    const error =
      wrongMethod ??
      new GatewayError('not_found', {
        message: `No endpoint at ${c.req.method} ${c.req.path}. ${
          c.env.admin
            ? `GET ${ADMIN_PREFIX} lists the admin endpoints.`
            : 'Endpoints: GET /v1/health, GET /v1/whoami, POST /v1/web/search, POST /v1/web/fetch.'
        }`,
      });
    return answer(c.env, error);
  });
  app.onError((error, c) => answer(c.env, error));

  /** Request id, then the routes, then the journal entry (admin calls are not journaled). */
  const handle = async (request: Request): Promise<Response> => {
    const env = { requestId: requestIdFor(request.headers), note: {} as JournalNote, admin: false };
    const path = pathOf(request.url);
    if (path.startsWith(ADMIN_PREFIX)) return app.fetch(request, env);
    const at = clock.now();
    const started = performance.now();
    const response = await app.fetch(request, env);
    // Routed to the admin API under another spelling of its path (e.g. percent-encoded).
    if (env.admin) return response;
    const { operation = 'other', ...learned } = env.note;
    // What the caller chose (an unrouted path, its own request id) may carry a token or API key: the
    // journal keeps them redacted. Routed paths are the endpoints' own; generated ids are UUIDs.
    const redact = (text: string) =>
      runtime.scanSecrets(text, {
        token: request.headers.get(IDENTITY_HEADER)?.trim(),
        agentId: learned.agent,
      }).redacted;
    runtime.journal.record({
      request_id: request.headers.has('x-request-id') ? redact(env.requestId) : env.requestId,
      at,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      real_ms: Math.round(started * 100) / 100,
      method: request.method,
      path: operation === 'other' ? redact(path) : path,
      operation,
      status: response.status,
      ...learned,
    });
    return response;
  };

  return {
    /** The gateway as a web-standard handler. */
    fetch: handle,
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
    clientReport,
    /** Mints a token for an agent of the registry (what `agent-gateway token` does). */
    mintToken: (agentId: string): string => runtime.idp.mintForAgent(agentId).token,
  };
}

export type Gateway = ReturnType<typeof createGateway>;
