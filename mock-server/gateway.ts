import { createFetchHandler } from './adapters/fetch.ts';
import { createClock, type VirtualClock } from './clock.ts';
import { loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { createCore, type GatewayCore } from './core.ts';
import { GatewayError } from './errors.ts';
import { createReportReader } from './gateway-report.ts';
import { createScenarioControl } from './gateway-scenarios.ts';
import { fingerprint } from './hash.ts';
import type { IdentityVerifier } from './identity/verifier.ts';
import { loadCorpus } from './providers/corpus.ts';
import { createFixtureFetchProvider, type FetchProvider } from './providers/fetch-provider.ts';
import { createFixtureSearchProvider, type SearchProvider } from './providers/search-provider.ts';
import { adminKeyProblem } from './routes/admin-key.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import type { Scenario, ScenarioInput } from './scenarios/scenarios.ts';
import { createMemoryAdmin } from './store/memory-admin.ts';
import { createSharedControl } from './store/shared-control.ts';
import { connectSharedStore, type SharedStore } from './store/shared-store.ts';
import type { AdminPort } from './store/state-port.ts';

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
  /**
   * A connected shared state store (`connectSharedStore`), so several instances act as one; see
   * `createSharedGateway`, which connects the one the config names. Default: everything in this process.
   */
  store?: SharedStore;
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
  // A key no request could send (blank, spaces at an end) would refuse every admin call: refused here.
  const keyProblem = options.adminKey === undefined ? undefined : adminKeyProblem(options.adminKey, 0);
  if (keyProblem) throw new GatewayError('invalid_request', { message: keyProblem });
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
    shared: options.store,
    adminKey: options.adminKey,
  });
  const scenarios = createScenarioControl({
    runtime,
    base,
    baseConfig,
    clock,
    initial: options.scenario,
  });
  const { resetToBase, useScenario, reset } = scenarios;
  if (options.scenario) useScenario(options.scenario);
  const { clientReport, readClientReport } = createReportReader(runtime, corpus);
  // With a shared store, admin changes are made per entity in the store and taken over from it.
  const control = options.store
    ? createSharedControl(options.store, {
        tools: () => runtime.tools.map((tool) => tool.name),
        snapshot: () => ({
          scenario: scenarios.input === undefined ? null : { input: scenarios.input },
          agents: runtime.registry.list(),
          tools: runtime.policy.tools,
          faults: [...runtime.faults.list()],
          clock: clock.state(),
        }),
        apply(next) {
          const current = scenarios.input === undefined ? null : { input: scenarios.input };
          if (JSON.stringify(next.scenario) !== JSON.stringify(current)) {
            if (next.scenario) useScenario(next.scenario.input);
            else resetToBase();
          }
          runtime.registry.restore(next.agents);
          runtime.policy.configure(next.tools);
          // The counts shown for a fault are this instance's last reading of the store's (strikes).
          const counts = new Map(runtime.faults.list().map((f) => [f.id, f]));
          runtime.faults.restore(
            next.faults.map((f) => ({
              ...f,
              seen: counts.get(f.id)?.seen ?? 0,
              fired: counts.get(f.id)?.fired ?? 0,
            })),
          );
          clock.restore(next.clock);
          options.store?.limits.useEpoch(next.epoch);
        },
      })
    : undefined;
  if (control) runtime.afterFaultSpent = (id) => control.faultSpent(id);
  const admin: AdminPort =
    control?.admin ??
    createMemoryAdmin({ registry: runtime.registry, policy: runtime.policy, faults: runtime.faults, clock });
  const core: GatewayCore = createCore(runtime, {
    serveIdentityProvider: options.serveIdentityProvider ?? !options.verifier,
    admin: options.adminKey
      ? {
          runtime,
          adminKey: options.adminKey,
          reset,
          useScenario,
          scenario: () => scenarios.scenario,
          clientReport: readClientReport,
          admin,
        }
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
      return scenarios.scenario;
    },
    clientReport,
    /** The client report from the journal in use (the shared one with a shared store): what the admin API serves. */
    readClientReport,
    /** Subscribes to the other instances' admin changes and takes over the shared state (shared store only). */
    startShared: async () => {
      await control?.start();
    },
    /** Mints a token for an agent of the registry (what `agent-gateway token` does). */
    mintToken: (agentId: string): string => runtime.idp.mintForAgent(agentId).token,
  };
}

export type Gateway = ReturnType<typeof createGateway>;

/**
 * Creates a gateway whose shared state lives where its config's `store.url` says: with `memory` (the
 * default) this is `createGateway`; with a Redis URL it first connects the store, so several instances (or
 * `serve --workers`) act as one. `close()` disconnects the store.
 *
 * @example
 * const gateway = await createSharedGateway({ config: { store: { url: 'redis://127.0.0.1:6379' } } });
 */
export async function createSharedGateway(
  options: GatewayOptions = {},
): Promise<Gateway & { close(): Promise<void> }> {
  const config = isResolved(options.config)
    ? options.config
    : loadConfig({ file: options.configFile, config: options.config });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (config.store.url === 'memory') {
    const gateway = createGateway({ ...options, config });
    return Object.assign(gateway, { close: async () => {} });
  }
  if (options.store) {
    // A store the caller connected (and closes).
    const gateway = createGateway({ ...options, config });
    await gateway.startShared();
    return Object.assign(gateway, { close: async () => {} });
  }
  const store = await connectSharedStore(config, log, {
    configFingerprint: configFingerprint(config),
  });
  const gateway = createGateway({ ...options, config, log, store });
  try {
    await gateway.startShared();
  } catch (error) {
    await store.close();
    throw error;
  }
  return Object.assign(gateway, { close: () => store.close() });
}

/**
 * What instances sharing a store must agree on: the config, except where it came from and how each
 * instance reaches the store (localhost or 127.0.0.1 is the same Redis).
 */
function configFingerprint(config: ResolvedConfig): string {
  const { source: _source, store, ...rest } = config;
  return fingerprint('cfg', JSON.stringify({ ...rest, store: { ...store, url: undefined } }));
}
