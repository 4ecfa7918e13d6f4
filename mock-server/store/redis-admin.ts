import type { ClockState } from '../clock.ts';
import { MAX_CLOCK_MS } from '../clock.ts';
import { TOOL_NAMES, type ToolConfig } from '../config/schema.ts';
import type { Agent, AgentPatch } from '../identity/agent-registry.ts';
import type { ToolSettings } from '../policy/policy.ts';
import type { Fault, FaultSpec } from '../scenarios/faults.ts';
import type { ScenarioInput } from '../scenarios/scenarios.ts';
import * as scripts from './redis-admin-scripts.ts';
import type { RedisConnection } from './redis-connection.ts';
import type { ClockChange, NewAgent } from './state-port.ts';

/** The admin state as every instance holds a copy of it. */
export interface AdminState {
  /** The scenario in force (as loaded: a bundled name, a file, or inline), or null for the base config. */
  scenario: { input: string | ScenarioInput } | null;
  agents: Agent[];
  tools: ToolSettings;
  faults: Fault[];
  clock: ClockState;
}

/** When each value of the admin state was written (the store's stamps, redis-admin-scripts.ts). */
export interface AdminStamps {
  /** The last reset or scenario: everything stamped before it is gone (-1: none yet). */
  replaced: number;
  /** The last time every fault was disarmed at once (-1: never). */
  cleared: number;
  /** The highest stamp the store has given. */
  top: number;
  /** Per agent: when this life of it began (its API key, incarnation, order) and when each field was written. */
  agents: Record<string, { born: number; order: number; fields: Record<string, number> }>;
  /** Per tool, when each field was written. */
  tools: Record<string, Record<string, number>>;
  /** Every fault the store holds with its stamp, disarmed ones too (spec ''). */
  faults: [id: string, spec: string, stamp: number][];
  clock: number;
}

/** The store's admin state at one version; `seed` names the store's life (a new one after a wipe). */
export interface StoredAdminState extends AdminState {
  version: number;
  seed: string;
  /** The stamp the store's history holds for this version: which change made it ('' where none is kept). */
  head: string;
  /** The history's stamp for the version the read asked about ('' where none is kept, or none asked). */
  askedHead: string;
  /** The limits' epoch: counts start over when it moves (reset, scenario). */
  epoch: number;
  stamps: AdminStamps;
}

/** An agent's fields a change may write, each with its own stamp. */
const AGENT_FIELDS = ['name', 'tier', 'allowlist', 'disabled'] as const;

/** The stamps of a state no change has touched (an instance's config at start): older than any change. */
export function configStamps(state: AdminState): AdminStamps {
  return {
    replaced: 0,
    cleared: -1,
    top: 0,
    agents: Object.fromEntries(
      state.agents.map((agent, i) => [
        agent.id,
        { born: 0, order: i + 1, fields: Object.fromEntries(AGENT_FIELDS.map((f) => [f, 0])) },
      ]),
    ),
    tools: Object.fromEntries(
      Object.entries(state.tools).map(([tool, config]) => [
        tool,
        Object.fromEntries(Object.keys(config).map((f) => [f, 0])),
      ]),
    ),
    faults: state.faults.map(({ id, seen: _seen, fired: _fired, ...spec }) => [id, JSON.stringify(spec), 0]),
    clock: 0,
  };
}

type Script = (...args: (string | number)[]) => Promise<unknown>;

/** Field/value pairs of a hash, each value as JSON text. */
const pairsOf = (fields: Record<string, unknown>): string[] =>
  Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .flatMap(([name, value]) => [name, JSON.stringify(value)]);

/**
 * A hash's values and their stamps (the `~` fields) apart. `stamped`: the values that carry a stamp; one
 * without it was written by a version before stamps, stamped 0, as old as a config (as MERGE counts it).
 */
const splitHash = (flat: string[], stamped?: readonly string[]) => {
  const values: Record<string, string> = {};
  const stamps: Record<string, number> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i] as string;
    if (name.startsWith('~')) stamps[name.slice(1)] = Number(flat[i + 1]);
    else values[name] = flat[i + 1] as string;
  }
  for (const name of stamped ?? Object.keys(values)) if (name in values) stamps[name] ??= 0;
  return { values, stamps };
};

const agentOf = (id: string, flat: string[]) => {
  const { values: f, stamps } = splitHash(flat, AGENT_FIELDS);
  const json = (name: string) => JSON.parse(f[name] as string);
  const agent: Agent = {
    id,
    name: json('name'),
    apiKey: json('api_key'),
    tier: json('tier'),
    allowlist: json('allowlist'),
    disabled: json('disabled'),
    tokenGeneration: Number(f.generation ?? 0),
    incarnation: f.incarnation === undefined ? 'c0' : json('incarnation'),
  };
  const { born = 0, ...fields } = stamps;
  return { agent, stamps: { born, order: Number(f.order ?? 0), fields } };
};

const faultNumber = (id: string) => Number(/^fault-(\d+)$/.exec(id)?.[1] ?? 0);

/** What READ_ALL returns (redis-admin-scripts.ts). */
type ReadAllReply = [
  string,
  string,
  string,
  string,
  string[],
  string[],
  [string, string[]][],
  [string, string[]][],
  string,
  string,
  string,
  string,
  string,
];

/** The admin state READ_ALL returned, as every instance holds it. */
function storedStateOf(reply: ReadAllReply): StoredAdminState {
  const [
    version,
    seed,
    scenario,
    epoch,
    clock,
    faults,
    agentHashes,
    tools,
    replaced,
    cleared,
    top,
    head,
    asked,
  ] = reply;
  const { values: clockFields, stamps: clockStamp } = splitHash(clock, []);
  const faultHash = splitHash(faults);
  const agents = agentHashes
    .map(([id, flat]) => agentOf(id, flat))
    .sort((a, b) => a.stamps.order - b.stamps.order);
  const toolHashes = tools.map(([tool, flat]) => [tool, splitHash(flat)] as const);
  return {
    version: Number(version),
    seed,
    head,
    askedHead: asked,
    epoch: Number(epoch),
    scenario: scenario === '' ? null : JSON.parse(scenario),
    clock: {
      offset: Number(clockFields.offset ?? 0),
      ...(clockFields.frozenAt === undefined ? {} : { frozenAt: Number(clockFields.frozenAt) }),
      epoch: Number(clockFields.epoch ?? 0),
    },
    faults: Object.entries(faultHash.values)
      .filter(([, spec]) => spec !== '')
      .sort(([a], [b]) => faultNumber(a) - faultNumber(b))
      .map(([id, spec]) => ({ ...(JSON.parse(spec) as FaultSpec), id, seen: 0, fired: 0 })),
    agents: agents.map((a) => a.agent),
    tools: Object.fromEntries(
      toolHashes.map(([tool, { values }]) => [
        tool,
        Object.fromEntries(Object.entries(values).map(([f, v]) => [f, JSON.parse(v)])),
      ]),
    ) as ToolSettings,
    stamps: {
      replaced: Number(replaced),
      cleared: Number(cleared),
      top: Number(top),
      agents: Object.fromEntries(agents.map((a) => [a.agent.id, a.stamps])),
      tools: Object.fromEntries(toolHashes.map(([tool, { stamps }]) => [tool, stamps])),
      faults: Object.entries(faultHash.values).map(([id, spec]) => [id, spec, faultHash.stamps[id] ?? 0]),
      clock: clockStamp[''] ?? (clockFields.offset === undefined ? -1 : 0),
    },
  };
}

/** A state with its stamps as MERGE and REPLACE take it (one JSON argument; numbers as text, exact in Lua). */
function statePayload(state: AdminState, stamps: AdminStamps) {
  const at = (n: number | undefined) => String(n ?? -1);
  return {
    replaced: at(stamps.replaced),
    cleared: at(stamps.cleared),
    top: at(stamps.top),
    scenario: state.scenario === null ? '' : JSON.stringify(state.scenario),
    lastFault: String(Math.max(0, ...stamps.faults.map(([id]) => faultNumber(id)))),
    agents: state.agents.map((agent) => {
      const own = stamps.agents[agent.id];
      const values = pairsOf({
        name: agent.name,
        tier: agent.tier,
        allowlist: agent.allowlist,
        disabled: agent.disabled,
      });
      const fields: string[][] = [];
      for (let i = 0; i < values.length; i += 2)
        fields.push([values[i] as string, values[i + 1] as string, at(own?.fields[values[i] as string])]);
      return {
        id: agent.id,
        apiKey: agent.apiKey,
        incarnation: agent.incarnation,
        generation: String(agent.tokenGeneration),
        order: String(own?.order ?? 0),
        born: at(own?.born),
        fields,
      };
    }),
    tools: Object.entries(state.tools).map(([name, config]) => {
      const values = pairsOf(config);
      const fields: string[][] = [];
      for (let i = 0; i < values.length; i += 2)
        fields.push([
          values[i] as string,
          values[i + 1] as string,
          at(stamps.tools[name]?.[values[i] as string]),
        ]);
      return { name, fields };
    }),
    faults: stamps.faults.map(([id, spec, stamp]) => [id, spec, at(stamp)]),
    clock: {
      offset: String(Math.round(state.clock.offset)),
      frozenAt: state.clock.frozenAt === undefined ? '' : String(Math.round(state.clock.frozenAt)),
      epoch: String(state.clock.epoch ?? 0),
      stamp: at(stamps.clock),
    },
  };
}

/**
 * What a change script answered: the admin version it made and the stamp it wrote (with `extra`: the
 * generation of a revoke, the number of a fault), or why nothing changed: `missing` (no such entity, or its
 * id is taken), `key_taken`, `not_rebuilt` (the store holds no admin state: emptied, not yet merged back),
 * `out_of_range` (a clock change past the latest time).
 */
export type ChangeReply =
  | { kind: 'done'; version: number; stamp: number; extra: number }
  | { kind: 'missing' | 'key_taken' | 'not_rebuilt' };

const replyOf = (reply: unknown): ChangeReply => {
  const [code, stamp, extra] = reply as [number, string?, number?];
  if (code === -9) return { kind: 'not_rebuilt' };
  if (code === -2) return { kind: 'key_taken' };
  if (code < 0) return { kind: 'missing' };
  return { kind: 'done', version: code, stamp: Number(stamp), extra: Number(extra ?? 0) };
};

/**
 * The admin state's keys on Redis and one call per change (redis-admin-scripts.ts). `floor` is the highest
 * stamp this instance has seen: every stamp the store gives it is higher. `read` returns the whole state at
 * one version with its stamps; `merge` puts an instance's copy back into a store that lost it.
 */
export function createRedisAdmin(connection: RedisConnection, floor: () => number = () => 0) {
  const { redis } = connection;
  const prefix = connection.key('admin:');
  const keys = {
    version: `${prefix}version`,
    seed: `${prefix}seed`,
    head: `${prefix}head`,
    generations: connection.key('generations'),
    epoch: connection.key('epoch'),
  };
  const channel = `${prefix}changed`;
  const defined = new Map<string, Script>();
  for (const [name, lua] of Object.entries(scripts)) {
    redis.defineCommand(`agwAdmin_${name}`, { lua, numberOfKeys: 2 });
    const command = (redis as unknown as Record<string, Script>)[`agwAdmin_${name}`] as Script;
    defined.set(name, (...args) => command.call(redis, ...args));
  }
  const run = (name: keyof typeof scripts, ...args: (string | number)[]) =>
    connection.bounded(
      (defined.get(name) as Script)(keys.generations, keys.epoch, channel, prefix, String(floor()), ...args),
    );
  const change = async (name: keyof typeof scripts, ...args: (string | number)[]) =>
    replyOf(await run(name, ...args));

  return {
    channel,
    keys,
    createAgent: (agent: NewAgent) =>
      change(
        'CREATE_AGENT',
        agent.id,
        agent.apiKey,
        ...pairsOf({
          name: agent.name,
          api_key: agent.apiKey,
          tier: agent.tier,
          allowlist: agent.allowlist,
          disabled: agent.disabled,
          incarnation: crypto.randomUUID(),
        }),
      ),
    updateAgent: (id: string, patch: AgentPatch) =>
      change(
        'SET_FIELDS',
        `agent:${id}`,
        '1',
        ...pairsOf({
          name: patch.name,
          tier: patch.tier,
          allowlist: patch.allowlist,
          disabled: patch.disabled,
        }),
      ),
    revokeTokens: (id: string) => change('REVOKE', id),
    updateTool: (tool: string, patch: Partial<ToolConfig>) =>
      change('SET_FIELDS', `tool:${tool}`, '0', ...pairsOf(patch)),
    armFault: (spec: FaultSpec) => change('ARM_FAULT', JSON.stringify(spec)),
    /** One fault, or every fault with `id` undefined. */
    disarm: (id: string | undefined) => change('DISARM', id ?? ''),
    changeClock: (clockChange: ClockChange) =>
      change(
        'CLOCK',
        clockChange.kind,
        Date.now(),
        clockChange.kind === 'advance'
          ? clockChange.ms
          : clockChange.kind === 'set'
            ? clockChange.epochMs
            : 0,
        clockChange.kind === 'set' && clockChange.frozen !== undefined
          ? clockChange.frozen
            ? '1'
            : '0'
          : '',
        MAX_CLOCK_MS,
      ),

    /**
     * The whole state at one version (version 0 and no seed: the store holds none), with the history's
     * stamp of version `asked` (a version read before), to tell whether the store still holds it.
     */
    async read(toolNames: readonly string[] = TOOL_NAMES, asked?: number): Promise<StoredAdminState> {
      const reply = await run('READ_ALL', asked === undefined ? '' : String(asked), ...toolNames);
      return storedStateOf(reply as ReadAllReply);
    },

    /** Merges a copy of the state into the store, per value the newest winning; its version and seed after. */
    async merge(state: AdminState, stamps: AdminStamps, seedId: string) {
      const [version, seed] = (await run('MERGE', seedId, JSON.stringify(statePayload(state, stamps)))) as [
        number,
        string,
      ];
      return { version, seed };
    },

    /** Writes a whole state stamped anew (a reset or scenario): everything before it is gone. */
    replace: (state: AdminState, seedId: string) =>
      change('REPLACE', seedId, JSON.stringify(statePayload(state, configStamps(state)))),
  };
}

export type RedisAdmin = ReturnType<typeof createRedisAdmin>;
