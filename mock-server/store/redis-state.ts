import type { ResolvedConfig } from '../config/load-config.ts';
import type { FaultInjector } from '../scenarios/faults.ts';
import type { SharedStore } from './shared-store.ts';
import type { LimitDecision, StatePort } from './state-port.ts';

/**
 * The state port on a shared store (Redis): limits, idempotency keys, the journal and fault strikes are the
 * store's, so several instances act as one; every answer is a promise, and a store that does not answer is
 * 503 state_store_unavailable, never a decision from this process's counts. `local` is this process's own
 * memory port: configured alongside (so a scenario or reset leaves it as the memory gateway would), and
 * cleared with the store's journal.
 */
export function createRedisState(
  store: SharedStore,
  local: StatePort,
  parts: {
    /** The config in force (scenarios replace it): the rules the store's script decides. */
    config: () => ResolvedConfig;
    /** The armed faults (the list is the store's admin state; strikes are counted in the store). */
    faults: FaultInjector;
    /** Tells the other instances a fault was spent here. */
    faultSpent: (id: string) => void;
  },
): StatePort {
  const { connection } = store;
  return {
    clock: local.clock,
    limits: {
      async admit(identity, operation, now, maxInFlight): Promise<LimitDecision> {
        const agentId = identity.agentId;
        let decision: Awaited<ReturnType<SharedStore['limits']['admit']>>;
        try {
          decision = await store.limits.admit(
            parts.config().rate_limits.rules,
            // A token from a remote identity provider carries no generation: revocation is that provider's.
            { agentId, tier: identity.tier, generation: identity.generation ?? Number.MAX_SAFE_INTEGER },
            operation,
            now,
            maxInFlight,
          );
        } catch (error) {
          throw connection.unavailable(error);
        }
        if (decision.kind !== 'decided') return decision;
        const { lease } = decision;
        return {
          kind: 'decided',
          result: decision.result,
          inFlight: decision.inFlight,
          release: lease === undefined ? () => {} : () => store.limits.release(agentId, lease),
        };
      },
    },
    // Keys live in the store: a retry may land on another instance.
    idempotency: store.idempotency,
    journal: {
      // Serialised into the store, which must never hold anything unredacted: the readings applied at once,
      // the exchange sealed until a reader redacts it (redis-journal-exchange.ts).
      record(entry, exchange, readings) {
        readings?.apply(entry);
        store.journal.record(entry, exchange);
      },
      page: (filter) => store.journal.page(filter),
      list: (filter) => store.journal.page(filter),
      readInSlices: (filter) => store.journal.readAll(filter),
      exportSlices: (filter) => store.journal.exportSlices(filter),
      entrySlices: (filter) => store.journal.entrySlices(filter),
      async clear() {
        await local.journal.clear();
        await store.journal.clear();
      },
    },
    faults: {
      strike(target, agentId) {
        // Strikes are counted in the store, so `count` and `every` hold across instances.
        const candidates = parts.faults.matching(target, agentId);
        if (candidates.length === 0) return undefined;
        return store.faults.strike(candidates, store.limits.epoch).then(
          (fault) => {
            // Spent: disarmed here, and on the other instances through the admin snapshot.
            if (fault?.count !== undefined && fault.fired >= fault.count) {
              parts.faults.remove(fault.id);
              parts.faultSpent(fault.id);
            }
            return fault;
          },
          (error) => {
            throw connection.unavailable(error);
          },
        );
      },
    },
    refusal: () => connection.refusal,
    configure(config) {
      local.configure(config);
      store.journal.resize(config.journal.capacity);
      store.idempotency.configure({ ttlSeconds: config.idempotency.ttl_seconds });
    },
  };
}
