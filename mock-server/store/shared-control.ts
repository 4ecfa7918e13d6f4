import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import {
  type AdminStamps,
  type AdminState,
  type ChangeReply,
  configStamps,
  createRedisAdmin,
  type RedisAdmin,
  type StoredAdminState,
} from './redis-admin.ts';
import type { RedisConnection } from './redis-connection.ts';
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

/** The Retry-After (seconds) of a change the store could not confirm: a guard interval or two. */
const RETRY_AFTER_SECONDS = 1;

/** The 503 of a change the store did not confirm: it may or may not have been made. */
function unconfirmed(connection: RedisConnection, error: unknown): GatewayError {
  const refusal = connection.unavailable(error);
  if (refusal.code !== 'state_store_unavailable') return refusal;
  return new GatewayError('state_store_unavailable', {
    message: `${refusal.message} The change may or may not have been made in the shared store (this instance takes over whatever the store holds once it answers): read the state back (GET on the admin API) before repeating it.`,
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
}

/** What a change answered 'done' must find in the state read back: its stamp, or a newer one. */
type Landed = (state: StoredAdminState, reply: Extract<ChangeReply, { kind: 'done' }>) => boolean;

/** A stamp at least the change's. */
const at = (n: number | undefined, reply: { stamp: number }) => (n ?? -1) >= reply.stamp;
/** Every one of an agent's `fields` carries the change's stamp or a newer one. */
const agentFieldsLanded =
  (id: string, fields: readonly string[]): Landed =>
  (state, reply) =>
    fields.every((f) => at(state.stamps.agents[id]?.fields[f], reply));
/** When a fault was last written (armed, disarmed, or every fault cleared). */
const faultStamp = (state: StoredAdminState, id: string) =>
  Math.max(state.stamps.cleared, state.stamps.faults.find(([fault]) => fault === id)?.[2] ?? -1);
/** The fields a patch names (those it leaves undefined are not changed). */
const namedFields = (patch: object) =>
  Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([field]) => field);

/**
 * This instance's copy of the store's admin state: reads it (one read at a time), merges its copy back
 * into a store that lost its state, and puts what it read in force (`hooks.apply`).
 *
 * A store in another life than the one read last (another seed: emptied and rebuilt), behind it (a lower
 * version: a restart that lost the last writes), or past it by other changes (its history names another
 * change for the version read: restarted from an older snapshot, then changed) gets this instance's copy
 * (newest per value wins), then is read again; a store lost again meanwhile: again. What is read after a merge holds every value of
 * this copy or a newer one: it is taken over.
 */
function createAdminFollower(admin: RedisAdmin, hooks: ControlHooks) {
  let held: StoredAdminState | undefined;
  /** The store's life, version and that version's stamp in its history, as last read. */
  let applied = { seed: '', version: -1, head: '' };

  /** This instance's copy: the last state read, or (nothing read yet) its config, stamped older than any change. */
  const copy = (): { state: AdminState; stamps: AdminStamps } => {
    if (held) return { state: held, stamps: held.stamps };
    const state = hooks.snapshot();
    return { state, stamps: configStamps(state) };
  };
  /**
   * Whether the store lost what this instance read last: emptied (no seed, another seed), behind (a lower
   * version), or past it by other changes (its history holds another stamp for the version read: restarted
   * from an older snapshot, then changed). A history trimmed past it also counts: a merge is harmless.
   */
  const lostSinceRead = (state: StoredAdminState) =>
    state.seed === '' ||
    state.seed !== applied.seed ||
    state.version < applied.version ||
    (applied.version > 0 && state.askedHead !== applied.head);
  const read = () => admin.read(hooks.tools?.(), applied.version > 0 ? applied.version : undefined);
  const readAndApply = async () => {
    let state = await read();
    let merged = false;
    for (let round = 0; lostSinceRead(state); round++) {
      if (round === 3) throw new Error('the store lost its state again while it was being rebuilt');
      const { state: mine, stamps } = copy();
      const after = await admin.merge(mine, stamps, randomUUID());
      state = await read();
      merged = state.seed === after.seed && state.version >= after.version;
      if (merged) break;
    }
    if (!merged && state.seed === applied.seed && state.version <= applied.version) return;
    held = state;
    applied = { seed: state.seed, version: state.version, head: state.head };
    hooks.apply(state);
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
  return {
    reload,
    /** The last state read (undefined before the first). */
    held: () => held,
    /**
     * Whether the store's seed or version differ from what was read last, or its version is the same but
     * made by another change (`head`: a store restarted from an older snapshot and changed since): something
     * to read.
     */
    behind: (seed: string, version: number, head: string) =>
      seed !== applied.seed || version !== applied.version || head !== applied.head,
    /** Forgets the version read, so the next read takes over whatever the store holds. */
    forgetVersion() {
      applied = { seed: applied.seed, version: -1, head: '' };
    },
  };
}

type AdminFollower = ReturnType<typeof createAdminFollower>;

/**
 * How a change is run and answered (docs/operators.md, "The rule for admin changes"): `change` runs one
 * script, then reads the state back, and answers only when the state read shows it; `missing` tells a 404
 * from a store that lost an agent this instance holds.
 */
function createChangeRunner(follower: AdminFollower, refuse: (error: unknown) => GatewayError) {
  return {
    /**
     * Runs a change and reads the state back; answers only when the state read shows it (`landed`: its
     * stamp or a newer one on what it changed) or a reset made after it. A store holding no state: this
     * instance's copy goes in first (the read merges it), then the change once more. Otherwise a 503.
     */
    async change(work: () => Promise<ChangeReply>, landed: Landed): Promise<ChangeReply> {
      try {
        let reply = await work();
        if (reply.kind === 'not_rebuilt') {
          await follower.reload();
          reply = await work();
        }
        if (reply.kind === 'not_rebuilt') throw new Error('the store holds no admin state yet (emptied)');
        await follower.reload();
        if (reply.kind !== 'done') return reply;
        const state = follower.held() as StoredAdminState;
        if (!landed(state, reply) && state.stamps.replaced < reply.stamp)
          throw new Error('the store lost the change before this instance could read it back');
        return reply;
      } catch (error) {
        throw refuse(error);
      }
    },
    /**
     * An agent the store says it does not have, while this instance holds it: the store lost it and is not
     * rebuilt from every copy yet (no agent is ever deleted but by a reset). Not a 404: a 503 to retry.
     */
    missing(id: string): false {
      if (follower.held()?.agents.some((agent) => agent.id === id))
        throw refuse(new Error(`the store lost agent "${id}" and is being rebuilt`));
      return false;
    },
  };
}

/** The admin API's changes on the store, one script each, answered as `createChangeRunner` says. */
function createSharedAdminPort(
  store: SharedStore,
  admin: RedisAdmin,
  follower: AdminFollower,
  hooks: ControlHooks,
): AdminPort {
  const refuse = (error: unknown) => unconfirmed(store.connection, error);
  const { change, missing } = createChangeRunner(follower, refuse);

  return {
    async createAgent(agent) {
      const reply = await change(
        () => admin.createAgent(agent),
        (state, r) => at(state.stamps.agents[agent.id]?.born, r),
      );
      return reply.kind === 'missing' ? 'id_taken' : reply.kind === 'key_taken' ? 'key_taken' : 'created';
    },
    async updateAgent(id, patch) {
      const reply = await change(
        () => admin.updateAgent(id, patch),
        agentFieldsLanded(id, namedFields(patch)),
      );
      return reply.kind === 'done' || missing(id);
    },
    async revokeTokens(id) {
      const reply = await change(
        () => admin.revokeTokens(id),
        (state, r) => (state.agents.find((agent) => agent.id === id)?.tokenGeneration ?? -1) >= r.extra,
      );
      return reply.kind === 'done' || missing(id);
    },
    async updateTool(tool, patch) {
      const fields = namedFields(patch);
      await change(
        () => admin.updateTool(tool, patch),
        (state, r) => fields.every((f) => at(state.stamps.tools[tool]?.[f], r)),
      );
    },
    async armFault(spec) {
      let id = '';
      await change(
        async () => {
          const reply = await admin.armFault(spec);
          if (reply.kind === 'done') id = `fault-${reply.extra}`;
          return reply;
        },
        (state, r) => faultStamp(state, id) >= r.stamp,
      );
      return { ...spec, id, seen: 0, fired: 0 };
    },
    disarmFault: async (id) =>
      (
        await change(
          () => admin.disarm(id),
          (state, r) => faultStamp(state, id) >= r.stamp,
        )
      ).kind === 'done',
    async clearFaults() {
      await change(
        () => admin.disarm(undefined),
        (state, r) => state.stamps.cleared >= r.stamp,
      );
    },
    async changeClock(clockChange) {
      const reply = await change(
        () => admin.changeClock(clockChange),
        (state, r) => state.stamps.clock >= r.stamp,
      );
      if (reply.kind === 'missing')
        throw new RangeError(
          `advancing by ${clockChange.kind === 'advance' ? clockChange.ms : 0} ms would pass 9999-12-31T23:59:59.999Z`,
        );
    },
    async replaced() {
      try {
        await admin.replace(hooks.snapshot(), randomUUID());
        await store.journal.clear();
        await follower.reload();
      } catch (error) {
        // This instance put it in force before the store confirmed it: it takes the store's state back
        // at its next read, whatever the store holds.
        follower.forgetVersion();
        throw refuse(error);
      }
    },
  };
}

/**
 * Admin changes across instances (docs/operators.md, "What survives what"). Each change is one atomic
 * script on its own entity's keys in Redis (redis-admin-scripts.ts), every value stamped: two instances
 * creating agents, or one disabling an agent while another creates one, never overwrite each other.
 *
 * The rule: a change is answered 2xx only once Redis has it and this instance read it back (its stamp, or a
 * newer one, in the state read); otherwise 503 `state_store_unavailable` with Retry-After, the change maybe
 * made, maybe not. Each instance holds the last state it read, with its stamps (`createAdminFollower`). A
 * store that lost its state (a new life: another seed, or a lower version) is rebuilt from the instances:
 * each merges its copy in when it notices (redis-admin-scripts.ts MERGE), per value the newest stamp
 * winning, so an older copy never overwrites a newer value and the order of merges does not matter; an
 * instance starting on an empty store merges its config (stamped older than any change). A change is
 * refused while the store holds no state at all: this instance merges its copy first, then makes the
 * change. A reset or scenario writes the whole state anew, stamped after everything before it.
 */
export function createSharedControl(store: SharedStore, hooks: ControlHooks) {
  const { connection } = store;
  const { redis } = connection;
  const log = connection.options.log;
  // Every stamp the store gives this instance is above the highest it has read (the floor is asked for
  // only when a script runs, after the follower exists).
  const admin = createRedisAdmin(connection, () => follower.held()?.stamps.top ?? 0);
  const follower = createAdminFollower(admin, hooks);
  const { reload } = follower;
  const reloadLogged = () => reload().catch((error) => log(`admin state not re-read: ${String(error)}`));
  /** Asks the store for its admin version (a message may have been missed) and reads it if it moved. */
  const poll = async () => {
    if (redis.status !== 'ready') return;
    const [version, seedId, head] = await connection.bounded(
      redis.mget(admin.keys.version, admin.keys.seed, admin.keys.head),
    );
    if (follower.behind(seedId ?? '', Number(version ?? 0), head ?? '')) await reload();
  };
  const subscriber = connection.subscriber();
  let started = false;

  return {
    admin: createSharedAdminPort(store, admin, follower, hooks),
    /** Subscribes, then takes over the store's state, or merges this instance's config into a store holding none. */
    async start() {
      subscriber.on('message', () => void reloadLogged());
      await subscriber.subscribe(admin.channel);
      // After an outage messages may have been missed: read again (the poll would, a little later).
      redis.on('ready', () => {
        if (started) void reloadLogged();
      });
      await reload();
      started = true;
      const polling = setInterval(() => {
        poll().catch(() => {});
      }, ADMIN_POLL_MS);
      polling.unref();
      // The store was emptied: this instance's copy goes back in (merged, newest per value), for the
      // instances running and those starting later alike.
      store.guard.onWipe(() => void reloadLogged());
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
