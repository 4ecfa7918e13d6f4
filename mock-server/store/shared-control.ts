import type { ClockState } from '../clock.ts';
import { GatewayError } from '../errors.ts';
import type { Agent } from '../identity/agent-registry.ts';
import type { ToolSettings } from '../policy/policy.ts';
import type { Fault } from '../scenarios/faults.ts';
import type { ScenarioInput } from '../scenarios/scenarios.ts';
import type { SharedStore } from './shared-store.ts';

/** The admin-controlled state every instance holds a copy of: what the admin API and scenarios change. */
export interface ControlSnapshot {
  /** The scenario in force (as loaded: a bundled name, a file, or inline), or null for the base config. */
  scenario: { input: string | ScenarioInput } | null;
  agents: Agent[];
  tools: ToolSettings;
  faults: Fault[];
  clock: ClockState;
  /** The limits' epoch: counts start over when it moves (reset, scenario). */
  epoch: number;
}

/** What an instance does with the control state: read its own, take over another's. */
export interface ControlHooks {
  snapshot(): Omit<ControlSnapshot, 'epoch'>;
  apply(snapshot: ControlSnapshot): void;
}

/**
 * Admin changes across instances, by invalidation: the instance that made a change writes the whole control
 * snapshot to the store and publishes one message; every other instance re-reads the snapshot and takes it
 * over. Pub/sub rather than a re-read per request, because this state changes rarely and the hot path must
 * not pay a round trip for it; a whole snapshot rather than deltas, because a missed message (a reconnect)
 * then costs nothing: the next re-read is complete, and every instance re-reads after a reconnect.
 * Revocations are also checked in the admit script, so they hold on every instance at once.
 */
export function createSharedControl(store: SharedStore, hooks: ControlHooks) {
  const { connection, limits, instanceId } = store;
  const { redis } = connection;
  const snapshotKey = connection.key('control');
  const channel = connection.key('control:changed');
  const subscriber = connection.subscriber();
  let started = false;

  const reload = async () => {
    const [text, epoch] = await Promise.all([redis.get(snapshotKey), limits.loadEpoch()]);
    if (text) hooks.apply({ ...(JSON.parse(text) as ControlSnapshot), epoch });
  };
  const reloadLogged = () =>
    reload().catch((error) => connection.options.log(`admin state not re-read: ${String(error)}`));

  const publish = async (kind: 'state' | 'reset') => {
    if (kind === 'reset') {
      await limits.forget();
      await store.journal.clear();
    }
    const snapshot = hooks.snapshot();
    // Revocations first, where every instance's admission script checks them.
    await Promise.all(
      snapshot.agents
        .filter((agent) => agent.tokenGeneration > 0)
        .map((agent) => limits.setGeneration(agent.id, agent.tokenGeneration)),
    );
    await redis.set(snapshotKey, JSON.stringify({ ...snapshot, epoch: limits.epoch }));
    await redis.publish(channel, instanceId);
  };

  const control = {
    /** Subscribes, then takes over the store's state, or seeds it with this instance's when there is none. */
    async start() {
      subscriber.on('message', (_channel: string, from: string) => {
        if (from !== instanceId) void reloadLogged();
      });
      await subscriber.subscribe(channel);
      // After an outage: messages may have been missed, so read everything again.
      redis.on('ready', () => {
        if (started) void reloadLogged();
      });
      const seeded = await redis.set(
        snapshotKey,
        JSON.stringify({ ...hooks.snapshot(), epoch: limits.epoch }),
        'NX',
      );
      if (!seeded) await reload();
      started = true;
      // The store was emptied: this instance's admin state (revocations included) goes back in, for the
      // instances running and those starting later alike.
      store.guard.onWipe(() => {
        control
          .changed()
          .catch((error) => connection.options.log(`admin state not written back: ${String(error)}`));
      });
    },

    /**
     * Publishes this instance's state after an admin change; `reset` also starts every count over and
     * empties the shared journal (reset, scenario). Resolves once the store has it: from then on every
     * instance that re-reads sees it (revocations are in force everywhere at once).
     * Past the deadline the answer is a 503 but the writes already sent are not called back: the change
     * is in force on this instance and may still reach the store and the other instances afterwards; the
     * 503's message says so (a retry publishes this instance's whole state again; it does not undo it).
     */
    async changed(kind: 'state' | 'reset' = 'state') {
      // One deadline for the whole change (several round trips).
      const writing = publish(kind);
      try {
        await connection.bounded(writing);
      } catch (error) {
        const refusal = connection.unavailable(error);
        if (refusal.code !== 'state_store_unavailable') throw refusal;
        throw new GatewayError('state_store_unavailable', {
          message: `${refusal.message} The change is in force on this instance, and the shared store and the other instances may still get it after this answer (its writes are not called back): read the state back (GET on the admin API) before repeating it.`,
        });
      }
    },

    reload,
  };
  return control;
}

export type SharedControl = ReturnType<typeof createSharedControl>;
