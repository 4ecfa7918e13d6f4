import type { VirtualClock } from '../clock.ts';
import type { ResolvedConfig } from '../config/load-config.ts';
import type { IdempotencyStore } from '../idempotency.ts';
import type { Journal } from '../journal/journal.ts';
import type { ConcurrencyTracker } from '../limits/concurrency.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { FaultInjector } from '../scenarios/faults.ts';
import type { LimitDecision, StatePort } from './state-port.ts';

/** The components of this process the memory port runs on (the runtime's; they keep their identity). */
export interface MemoryParts {
  clock: VirtualClock;
  limiter: RateLimiter;
  concurrency: ConcurrencyTracker;
  idempotency: IdempotencyStore;
  journal: Journal;
  faults: FaultInjector;
}

const NOTHING_HELD = () => {};

/**
 * The state port in this process: every answer synchronous, no promise on the hot path. A refused
 * request takes no in-flight slot, as on the shared store.
 */
export function createMemoryState(parts: MemoryParts): StatePort {
  const { clock, limiter, concurrency, idempotency, journal, faults } = parts;
  return {
    clock,
    limits: {
      admit(identity, operation, now, maxInFlight): LimitDecision {
        const agentId = identity.agentId;
        const inFlight = concurrency.current(agentId);
        if (maxInFlight != null && inFlight >= maxInFlight) return { kind: 'concurrency', inFlight };
        const result = limiter.admit(identity, operation, now);
        if (!result.allowed) return { kind: 'decided', result, inFlight, release: NOTHING_HELD };
        return {
          kind: 'decided',
          result,
          inFlight: concurrency.enter(agentId),
          release: () => concurrency.leave(agentId),
        };
      },
    },
    idempotency,
    journal: {
      record(entry, exchange, readings) {
        journal.record(entry, exchange || readings ? { exchange, readings } : undefined);
      },
      page: (filter) => journal.readPage(filter),
      list: (filter) => ({ entries: journal.list(filter), dropped: journal.dropped }),
      readInSlices: (filter) => journal.readAll(filter),
      exportSlices: (filter) => journal.exportSlices(filter),
      entrySlices: (filter) => journal.entrySlices(filter),
      clear: () => journal.clear(),
    },
    faults: { strike: (target, agentId) => faults.strike(target, agentId) },
    refusal: () => undefined,
    configure(config: ResolvedConfig) {
      limiter.configure(config.rate_limits.rules);
      idempotency.configure({
        ttlSeconds: config.idempotency.ttl_seconds,
        maxKeys: config.idempotency.max_keys,
      });
      if (journal.capacity !== config.journal.capacity) journal.resize(config.journal.capacity);
    },
  };
}
