import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import { type AdminState, createRedisAdmin, type StoredAdminState } from './redis-admin.ts';
import type { SharedStore } from './shared-store.ts';
import type { AdminPort } from './state-port.ts';

export type { AdminState, StoredAdminState };

/** What an instance does with the admin state: read its own, take over the store's. */
export interface ControlHooks {
  snapshot(): AdminState;
  /** Takes over the store's state, which is newer than the one this instance holds. */
  apply(state: StoredAdminState): void;
  /** The tools whose settings to read (the built-in ones and the config's extra ones; default built-in). */
  tools?(): readonly string[];
}

/**
 * How often every instance asks the store for its admin version, besides the pub/sub message each change
 * publishes: a message missed (a reconnect, a slow subscriber) costs at most this long, so a change made
 * anywhere is in force everywhere within about this plus one read (docs/operators.md states 1 s).
 */
export const ADMIN_POLL_MS = 250;

/**
 * Admin changes across instances (docs/architecture.md, "Shared state"). Each change is one atomic script on
 * its own entity's keys in Redis (redis-admin-scripts.ts): two instances creating agents, or one disabling
 * an agent while another creates one, never overwrite each other. A change is answered once Redis has it and
 * this instance read it back; the others read it when the change's message arrives or at their next poll
 * of the version. The store's state is taken over only when its version is newer than the one held (or the
 * store started a new life after a wipe), so nothing taken over ever reverts. A reset or scenario writes the
 * whole state once, as one script: it is the one change meant to replace everything.
 */
export function createSharedControl(store: SharedStore, hooks: ControlHooks) {
  const { connection } = store;
  const { redis } = connection;
  const log = connection.options.log;
  const admin = createRedisAdmin(connection);
  const subscriber = connection.subscriber();
  let applied = { seed: '', version: -1 };
  let started = false;

  const readAndApply = async () => {
    const state = await admin.read(hooks.tools?.());
    // An emptied store: nothing to take over (the instances write theirs back: `seed`).
    if (state.seed === '' && state.version === 0) return;
    if (state.seed === applied.seed && state.version <= applied.version) return;
    hooks.apply(state);
    applied = { seed: state.seed, version: state.version };
  };
  // One read at a time, each after the previous; calls meanwhile share the next one (which starts after
  // them, so it sees every change they were made for).
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  const reload = (): Promise<void> => {
    if (queued) return queued;
    const next = running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return readAndApply();
      });
    queued = next;
    running = next;
    return next;
  };
  const reloadLogged = () => reload().catch((error) => log(`admin state not re-read: ${String(error)}`));

  /** Writes this instance's state into a store that holds none (start, after a wipe); else reads it. */
  const seed = async () => {
    const seedId = randomUUID();
    const version = await admin.writeAll('seed', hooks.snapshot(), seedId);
    if (version > 0) applied = { seed: seedId, version };
    else await reload();
  };

  const poll = async () => {
    if (redis.status !== 'ready') return;
    const [version, seedId] = await connection.bounded(redis.mget(admin.keys.version, admin.keys.seed));
    const newer = Number(version ?? 0) > applied.version;
    if ((seedId && seedId !== applied.seed) || (seedId === applied.seed && newer)) await reload();
  };

  /** The 503 of a change the store did not confirm: it may or may not have been made. */
  const unconfirmed = (error: unknown) => {
    const refusal = connection.unavailable(error);
    if (refusal.code !== 'state_store_unavailable') return refusal;
    return new GatewayError('state_store_unavailable', {
      message: `${refusal.message} The change may or may not have been made in the shared store (this instance takes over whatever the store holds once it answers): read the state back (GET on the admin API) before repeating it.`,
    });
  };
  /** Runs a change and reads the state back, so the answer shows it; a store that fails is a 503. */
  const change = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      const result = await work();
      await reload();
      return result;
    } catch (error) {
      throw unconfirmed(error);
    }
  };

  const port: AdminPort = {
    createAgent: (agent) =>
      change(async () => {
        const version = await admin.createAgent(agent);
        return version === -1 ? 'id_taken' : version === -2 ? 'key_taken' : 'created';
      }),
    updateAgent: (id, patch) => change(async () => (await admin.updateAgent(id, patch)) > 0),
    revokeTokens: (id) => change(async () => (await admin.revokeTokens(id)) > 0),
    updateTool: (tool, patch) =>
      change(async () => {
        await admin.updateTool(tool, patch);
      }),
    armFault: (spec) =>
      change(async () => {
        const { id } = await admin.armFault(spec);
        return { ...spec, id, seen: 0, fired: 0 };
      }),
    disarmFault: (id) => change(async () => (await admin.disarm(id)) > 0),
    clearFaults: () =>
      change(async () => {
        await admin.disarm(undefined);
      }),
    async changeClock(clockChange) {
      const version = await change(() => admin.changeClock(clockChange));
      if (version === -1)
        throw new RangeError(
          `advancing by ${clockChange.kind === 'advance' ? clockChange.ms : 0} ms would pass 9999-12-31T23:59:59.999Z`,
        );
    },
    async replaced() {
      try {
        await admin.writeAll('replace', hooks.snapshot(), applied.seed);
        await store.journal.clear();
        await reload();
      } catch (error) {
        // This instance put it in force before the store confirmed it: it takes the store's state back
        // at its next read, whatever the store holds.
        applied = { seed: '', version: -1 };
        throw unconfirmed(error);
      }
    },
  };

  return {
    admin: port,
    /** Subscribes, then takes over the store's state, or seeds it with this instance's when it holds none. */
    async start() {
      subscriber.on('message', () => void reloadLogged());
      await subscriber.subscribe(admin.channel);
      // After an outage messages may have been missed: read again (the poll would, a little later).
      redis.on('ready', () => {
        if (started) void reloadLogged();
      });
      await seed();
      started = true;
      const polling = setInterval(() => {
        poll().catch(() => {});
      }, ADMIN_POLL_MS);
      polling.unref();
      // The store was emptied: this instance's admin state (revocations included) goes back in, for the
      // instances running and those starting later alike; the first instance to write it wins.
      store.guard.onWipe(() => {
        seed().catch((error) => log(`admin state not written back: ${String(error)}`));
      });
    },
    /** A fault spent on this instance (disarmed here already): disarmed in the store, for every instance. */
    faultSpent(id: string) {
      admin
        .disarm(id)
        .then(() => reload())
        .catch((error) => log(`spent fault not announced: ${String(error)}`));
    },
    reload,
  };
}

export type SharedControl = ReturnType<typeof createSharedControl>;
