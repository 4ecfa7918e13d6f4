import { createFetchHandler } from './adapters/fetch.ts';
import { type ClientReport, createClientReport } from './client-report/report.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import { createClock, type VirtualClock } from './clock.ts';
import { ConfigError, deepMerge, loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { createCore, type GatewayCore } from './core.ts';
import { GatewayError } from './errors.ts';
import type { IdentityVerifier } from './identity/verifier.ts';
import { applyConfig, createRuntime, type Runtime } from './runtime.ts';
import { loadScenario, parseScenario, type Scenario, type ScenarioInput } from './scenarios.ts';
import { loadCorpus } from './tools/corpus.ts';
import { createFixtureFetchProvider, type FetchProvider } from './tools/web-fetch.ts';
import { createFixtureSearchProvider, type SearchProvider } from './tools/web-search.ts';

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
 * Creates the reference gateway: one platform-free core (`core.handle(record)`) and the state behind it,
 * with its web-standard `fetch(request)` adapter. The Node server (`serve`) runs the core straight on
 * node:http; msw handlers and tests call `fetch`. Both reach the same core.
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
  const core: GatewayCore = createCore(runtime, {
    serveIdentityProvider: options.serveIdentityProvider ?? !options.verifier,
    admin: options.adminKey
      ? { runtime, adminKey: options.adminKey, reset, useScenario, scenario: () => scenario, clientReport }
      : undefined,
  });

  return {
    /** The gateway as a web-standard handler (msw, tests, `app.fetch` hosts). */
    fetch: createFetchHandler(core),
    /** The platform-free core every adapter calls; `serve(gateway)` runs it straight on node:http. */
    core,
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
