import { fromWebRequest } from '../../mock-server/adapters/fetch.ts';
import { createClock, type VirtualClock } from '../../mock-server/clock.ts';
import { loadConfig, type ResolvedConfig } from '../../mock-server/config/load-config.ts';
import type { GatewayConfigOverlay } from '../../mock-server/config/schema.ts';
import { GatewayError } from '../../mock-server/errors.ts';
import type { CallContext } from '../../mock-server/http/context.ts';
import { createIdempotencyStore } from '../../mock-server/idempotency.ts';
import type { Identity } from '../../mock-server/identity/identity-provider.ts';
import { createJournal } from '../../mock-server/journal/journal.ts';
import { createConcurrencyTracker } from '../../mock-server/limits/concurrency.ts';
import { createRateLimiter } from '../../mock-server/limits/rate-limiter.ts';
import { createFaultInjector } from '../../mock-server/scenarios/faults.ts';
import { createSecretScanner } from '../../mock-server/secrets/secrets.ts';
import { createMemoryState } from '../../mock-server/store/memory-state.ts';

/** One stage's world, without a gateway: a config, a frozen clock, the memory state port and its parts. */
export function stageWorld(overlay: GatewayConfigOverlay = {}, startAt = Date.UTC(2030, 0, 1)) {
  const config: ResolvedConfig = loadConfig({ config: overlay });
  const clock: VirtualClock = createClock({ frozen: true, startAt });
  const parts = {
    clock,
    limiter: createRateLimiter(config.rate_limits.rules),
    concurrency: createConcurrencyTracker(),
    idempotency: createIdempotencyStore({ ttlSeconds: 60, maxKeys: 100 }),
    journal: createJournal(config.journal.capacity),
    faults: createFaultInjector(),
  };
  const logged: string[] = [];
  const services = {
    config,
    clock,
    log: (line: string) => logged.push(line),
    scanSecrets: createSecretScanner({
      version: () => 1,
      keys: () => [{ key: 'ak_known_api_key_0123456789', owner: 'agent-a' }],
      canaries: [],
    }),
  };
  return { config, clock, parts, state: createMemoryState(parts), services, logged };
}

/** A request context for a stage, on the world's services. */
export function stageContext(
  world: ReturnType<typeof stageWorld>,
  init: { path?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
): CallContext {
  const request = fromWebRequest(
    new Request(`http://gw.test${init.path ?? '/v1/web/search'}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: init.headers,
      body: init.body,
    }),
  );
  return {
    request,
    runtime: world.services,
    requestId: 'req-1',
    note: {},
    at: world.clock.now(),
    started: 0,
  };
}

/** An identity as the verifier gives it. */
export const identityOf = (agentId: string, tier = 'verified'): Identity => ({
  agentId,
  name: agentId,
  tier,
  allowlist: [],
  tokenId: `tok-${agentId}`,
  issuedAt: 0,
  expiresAt: Date.UTC(2031, 0, 1),
});

/** The GatewayError a call throws (or its promise rejects with); fails when it throws nothing. */
export async function thrown(call: () => unknown): Promise<GatewayError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError, got an answer');
}
