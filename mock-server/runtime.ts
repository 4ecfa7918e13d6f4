import type { VirtualClock } from './clock.ts';
import { type ResolvedConfig, readYamlFile } from './config/load-config.ts';
import { createIdempotencyStore } from './idempotency.ts';
import { createAgentRegistry } from './identity/agent-registry.ts';
import { createIdentityProvider } from './identity/identity-provider.ts';
import { processSigningSecret } from './identity/signing-secret.ts';
import { createLocalVerifier, type IdentityVerifier } from './identity/verifier.ts';
import { createJournal } from './journal/journal.ts';
import { createConcurrencyTracker } from './limits/concurrency.ts';
import { createRateLimiter } from './limits/rate-limiter.ts';
import { createPolicy } from './policy/policy.ts';
import type { Corpus } from './providers/corpus.ts';
import type { FetchProvider } from './providers/fetch-provider.ts';
import type { SearchProvider } from './providers/search-provider.ts';
import { createFaultInjector, faultTargets } from './scenarios/faults.ts';
import type { ReplayTracks } from './scenarios/replay-tracks.ts';
import { createSecretScanner, type SecretScanner } from './secrets/secrets.ts';
import { createMemoryState } from './store/memory-state.ts';
import { createRedisState } from './store/redis-state.ts';
import type { SharedStore } from './store/shared-store.ts';
import type { StatePort } from './store/state-port.ts';
import { type AnyToolDefinition, toolDefinitions } from './tools/index.ts';

/**
 * Everything behind the gateway's handler. Components keep their identity for the gateway's lifetime and
 * are reconfigured in place (scenarios, reset), so the routes can hold on to them.
 */
export interface Runtime {
  /** The config in force now (the base config, or a scenario laid over it). */
  config: ResolvedConfig;
  readonly clock: VirtualClock;
  readonly registry: ReturnType<typeof createAgentRegistry>;
  /** When this gateway started, on its clock: a token issued before is none it minted (`pipeline/attribute.ts`). */
  readonly startedAt: number;
  readonly idp: ReturnType<typeof createIdentityProvider>;
  readonly verifier: IdentityVerifier;
  readonly policy: ReturnType<typeof createPolicy>;
  readonly limiter: ReturnType<typeof createRateLimiter>;
  readonly concurrency: ReturnType<typeof createConcurrencyTracker>;
  readonly faults: ReturnType<typeof createFaultInjector>;
  readonly journal: ReturnType<typeof createJournal>;
  readonly idempotency: ReturnType<typeof createIdempotencyStore>;
  readonly corpus: Corpus;
  /** Finds (and redacts) secrets in an agent's query or URL (`frozen()`: with the secrets known now, later). */
  readonly scanSecrets: SecretScanner;
  readonly search: SearchProvider;
  readonly fetchPage: FetchProvider;
  /**
   * Every tool the gateway serves, from its definition (`tools/`): the built-in ones and those its base
   * config declares. Fixed for the gateway's lifetime (its routes are built once); a scenario changes their
   * policy, not the catalogue.
   */
  readonly tools: readonly AnyToolDefinition[];
  readonly log: (line: string) => void;
  /**
   * The state the stages keep (limits, idempotency keys, journal, fault strikes, clock): in this process,
   * or on the shared store when there is one. Chosen once, here; stages call it and never ask which.
   */
  readonly state: StatePort;
  /**
   * The shared state store when several instances act as one (`store.url` is Redis), for what is set up
   * around it (the signing secret, the admin snapshot); stages use `state`. Undefined: all in this process.
   */
  readonly shared?: SharedStore;
  /** The recorded answers of the replay scenario in force (scenarios/replay-tracks.ts); set by the gateway. */
  replay?: ReplayTracks;
  /** With a shared store: tells the other instances a fault was spent here (set by the gateway). */
  afterFaultSpent?: (id: string) => void;
}

export function createRuntime(
  config: ResolvedConfig,
  parts: {
    clock: VirtualClock;
    corpus: Corpus;
    search: SearchProvider;
    fetchPage: FetchProvider;
    verifier?: IdentityVerifier;
    log: (line: string) => void;
    shared?: SharedStore;
    /** The admin key: found and redacted in every text the journal keeps, in any encoding. */
    adminKey?: string;
  },
): Runtime {
  const registry = createAgentRegistry(config.agents);
  const idp = createIdentityProvider({
    registry,
    clock: parts.clock,
    signingSecret: config.identity.signing_secret ?? parts.shared?.signingSecret ?? processSigningSecret(),
    issuer: config.identity.issuer,
    ttlSeconds: config.identity.token_ttl_seconds,
    // With a shared store: once a token is signed with the secret, this instance never gives it up.
    onSigned: parts.shared?.guard.signed,
  });
  const memory = {
    clock: parts.clock,
    limiter: createRateLimiter(config.rate_limits.rules),
    concurrency: createConcurrencyTracker(),
    // A fault names one of the gateway's endpoints or tools (its extra tools included), or none.
    faults: createFaultInjector({ targets: () => faultTargets(runtime.tools) }),
    journal: createJournal(config.journal.capacity),
    idempotency: createIdempotencyStore({
      ttlSeconds: config.idempotency.ttl_seconds,
      maxKeys: config.idempotency.max_keys,
    }),
  };
  const local = createMemoryState(memory);
  const { shared } = parts;
  const runtime: Runtime = {
    config,
    registry,
    startedAt: parts.clock.now(),
    idp,
    verifier: parts.verifier ?? createLocalVerifier(idp),
    policy: createPolicy(config.tools),
    ...memory,
    state: shared
      ? createRedisState(shared, local, {
          config: () => runtime.config,
          faults: memory.faults,
          faultSpent: (id) => runtime.afterFaultSpent?.(id),
        })
      : local,
    corpus: parts.corpus,
    scanSecrets: createSecretScanner({
      version: () => registry.version,
      keys: () => registry.list().map((agent) => ({ key: agent.apiKey, owner: agent.id })),
      canaries: parts.corpus.canarySecrets,
      adminKeys: parts.adminKey === undefined ? [] : [parts.adminKey],
      // Entries not yet read hold the secrets known at their call: settled soon, the old set let go of.
      onRetired: () => void memory.journal.settleRecorded(),
    }),
    search: parts.search,
    fetchPage: parts.fetchPage,
    tools: toolDefinitions(config.tools, readYamlFile),
    log: parts.log,
    shared: parts.shared,
  };
  // Sealed exchanges in the shared journal are redacted, when read here, with the secrets known here now.
  parts.shared?.journal.useScan(() => runtime.scanSecrets.frozen?.() ?? runtime.scanSecrets);
  // This instance drew a secret while the running ones were stalled, and adopted theirs (store-guard.ts).
  parts.shared?.guard.onSecret(() => {
    if (runtime.config.identity.signing_secret !== undefined) return;
    runtime.idp.configure({
      signingSecret: runtime.shared?.signingSecret ?? processSigningSecret(),
      issuer: runtime.config.identity.issuer,
      ttlSeconds: runtime.config.identity.token_ttl_seconds,
    });
  });
  return runtime;
}

/**
 * Puts a config in force: agents, tokens, tools, limits and stores start over from it. The clock, the
 * journal's contents, armed faults and in-flight counts are left alone (reset clears those separately).
 */
export function applyConfig(runtime: Runtime, config: ResolvedConfig): void {
  runtime.config = config;
  runtime.registry.replace(config.agents);
  runtime.idp.configure({
    // With a shared store and no configured secret: the one generated into the store (every instance's).
    signingSecret: config.identity.signing_secret ?? runtime.shared?.signingSecret ?? processSigningSecret(),
    issuer: config.identity.issuer,
    ttlSeconds: config.identity.token_ttl_seconds,
  });
  runtime.policy.configure(config.tools);
  runtime.state.configure(config);
}
