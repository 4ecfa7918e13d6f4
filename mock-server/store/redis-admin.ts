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

/** The store's admin state at one version; `seed` names the store's life (a new one after a wipe). */
export interface StoredAdminState extends AdminState {
  version: number;
  seed: string;
  /** The limits' epoch: counts start over when it moves (reset, scenario). */
  epoch: number;
}

type Script = (...args: (string | number)[]) => Promise<unknown>;

/** Field/value pairs of a hash, each value as JSON text. */
const pairsOf = (fields: Record<string, unknown>): string[] =>
  Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .flatMap(([name, value]) => [name, JSON.stringify(value)]);

const objectOf = (flat: string[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
};

const agentPairs = (agent: Omit<NewAgent, 'id'> & { incarnation?: string }) =>
  pairsOf({
    name: agent.name,
    api_key: agent.apiKey,
    tier: agent.tier,
    allowlist: agent.allowlist,
    disabled: agent.disabled,
    incarnation: agent.incarnation,
  });

const agentOf = (id: string, flat: string[]): Agent & { order: number } => {
  const f = objectOf(flat);
  const json = (name: string) => JSON.parse(f[name] as string);
  return {
    id,
    name: json('name'),
    apiKey: json('api_key'),
    tier: json('tier'),
    allowlist: json('allowlist'),
    disabled: json('disabled'),
    tokenGeneration: Number(f.generation ?? 0),
    incarnation: f.incarnation === undefined ? 'c0' : json('incarnation'),
    order: Number(f.order ?? 0),
  };
};

const faultNumber = (id: string) => Number(/^fault-(\d+)$/.exec(id)?.[1] ?? 0);

/** What READ_ALL returns: version, seed, scenario, epoch, clock fields, faults, agents' and tools' fields. */
type ReadAllReply = [
  string,
  string,
  string,
  string,
  string[],
  string[],
  [string, string[]][],
  [string, string[]][],
];

/** The admin state READ_ALL returned, as every instance holds it. */
function storedStateOf(reply: ReadAllReply): StoredAdminState {
  const [version, seed, scenario, epoch, clock, faults, agents, tools] = reply;
  const clockFields = objectOf(clock);
  return {
    version: Number(version),
    seed,
    epoch: Number(epoch),
    scenario: scenario === '' ? null : JSON.parse(scenario),
    clock: {
      offset: Number(clockFields.offset ?? 0),
      ...(clockFields.frozenAt === undefined ? {} : { frozenAt: Number(clockFields.frozenAt) }),
      epoch: Number(clockFields.epoch ?? 0),
    },
    faults: Object.entries(objectOf(faults))
      .sort(([a], [b]) => faultNumber(a) - faultNumber(b))
      .map(([id, spec]) => ({ ...(JSON.parse(spec) as FaultSpec), id, seen: 0, fired: 0 })),
    agents: agents
      .map(([id, flat]) => agentOf(id, flat))
      .sort((a, b) => a.order - b.order)
      .map(({ order: _order, ...agent }) => agent),
    tools: Object.fromEntries(
      tools.map(([tool, flat]) => [
        tool,
        Object.fromEntries(Object.entries(objectOf(flat)).map(([f, v]) => [f, JSON.parse(v)])),
      ]),
    ) as ToolSettings,
  };
}

/** A whole admin state as WRITE_ALL takes it (one JSON argument). */
function writeAllPayload(state: AdminState) {
  return {
    agents: state.agents.map((agent) => ({
      id: agent.id,
      apiKey: agent.apiKey,
      generation: String(agent.tokenGeneration),
      fields: agentPairs(agent),
    })),
    tools: Object.entries(state.tools).map(([name, config]) => ({ name, fields: pairsOf(config) })),
    faults: state.faults.map(({ id, seen: _seen, fired: _fired, ...spec }) => [id, JSON.stringify(spec)]),
    lastFault: String(Math.max(0, ...state.faults.map((f) => faultNumber(f.id)))),
    clock: {
      offset: String(Math.round(state.clock.offset)),
      frozenAt: state.clock.frozenAt === undefined ? '' : String(Math.round(state.clock.frozenAt)),
      epoch: String(state.clock.epoch ?? 0),
    },
    scenario: state.scenario === null ? '' : JSON.stringify(state.scenario),
  };
}

/**
 * The admin state's keys on Redis and one call per change (redis-admin-scripts.ts). Each change resolves
 * with the admin version it made (negative: it could not apply, nothing changed); `read` returns the whole
 * state at one version.
 */
export function createRedisAdmin(connection: RedisConnection) {
  const { redis } = connection;
  const k = (name: string) => connection.key(`admin:${name}`);
  const keys = {
    version: k('version'),
    seed: k('seed'),
    ids: k('agents'),
    apiKeys: k('api_keys'),
    agentOrder: k('agent_order'),
    faults: k('faults'),
    faultCounter: k('fault_counter'),
    clock: k('clock'),
    scenario: k('scenario'),
    generations: connection.key('generations'),
    epoch: connection.key('epoch'),
  };
  const channel = k('changed');
  const agentKey = (id: string) => k(`agent:${id}`);
  const toolKey = (tool: string) => k(`tool:${tool}`);
  const defined = new Map<string, Script>();
  for (const [name, lua] of Object.entries(scripts)) {
    redis.defineCommand(`agwAdmin_${name}`, { lua });
    const command = (redis as unknown as Record<string, Script>)[`agwAdmin_${name}`] as Script;
    defined.set(name, (...args) => command.call(redis, ...args));
  }
  const run = async (name: keyof typeof scripts, keyList: string[], ...args: (string | number)[]) =>
    connection.bounded((defined.get(name) as Script)(keyList.length, ...keyList, channel, ...args));

  return {
    channel,
    keys,
    createAgent: async (agent: NewAgent) =>
      (await run(
        'CREATE_AGENT',
        [keys.ids, keys.apiKeys, keys.generations, keys.agentOrder, keys.version],
        k('agent:'),
        agent.id,
        agent.apiKey,
        ...agentPairs({ ...agent, incarnation: crypto.randomUUID() }),
      )) as number,
    updateAgent: async (id: string, patch: AgentPatch) =>
      (await run(
        'SET_FIELDS',
        [agentKey(id), keys.version],
        '1',
        ...pairsOf({
          name: patch.name,
          tier: patch.tier,
          allowlist: patch.allowlist,
          disabled: patch.disabled,
        }),
      )) as number,
    revokeTokens: async (id: string) =>
      (await run('REVOKE', [agentKey(id), keys.generations, keys.version], id)) as number,
    updateTool: async (tool: string, patch: Partial<ToolConfig>) =>
      (await run('SET_FIELDS', [toolKey(tool), keys.version], '0', ...pairsOf(patch))) as number,
    /** Resolves with the version and the fault's id. */
    armFault: async (spec: FaultSpec) => {
      const [version, n] = (await run(
        'ARM_FAULT',
        [keys.faults, keys.faultCounter, keys.version],
        JSON.stringify(spec),
      )) as [number, number];
      return { version, id: `fault-${n}` };
    },
    /** One fault, or every fault with `id` undefined. */
    disarm: async (id: string | undefined) =>
      (await run('DISARM', [keys.faults, keys.version], id ?? '')) as number,
    changeClock: async (change: ClockChange) =>
      (await run(
        'CLOCK',
        [keys.clock, keys.version],
        change.kind,
        Date.now(),
        change.kind === 'advance' ? change.ms : change.kind === 'set' ? change.epochMs : 0,
        change.kind === 'set' && change.frozen !== undefined ? (change.frozen ? '1' : '0') : '',
        MAX_CLOCK_MS,
      )) as number,

    /** The whole state at one version (version 0 and no seed: the store holds none). */
    async read(toolNames: readonly string[] = TOOL_NAMES): Promise<StoredAdminState> {
      const reply = (await run(
        'READ_ALL',
        [keys.version, keys.seed, keys.ids, keys.faults, keys.clock, keys.scenario, keys.epoch],
        k('agent:'),
        k('tool:'),
        ...toolNames,
      )) as ReadAllReply;
      return storedStateOf(reply);
    },

    /** Writes a whole state: `seed` only into a store holding none (0: it holds one), `replace` always. */
    writeAll: async (mode: 'seed' | 'replace', state: AdminState, seedId: string) =>
      (await run(
        'WRITE_ALL',
        [
          keys.version,
          keys.seed,
          keys.ids,
          keys.apiKeys,
          keys.faults,
          keys.faultCounter,
          keys.clock,
          keys.scenario,
          keys.generations,
          keys.epoch,
          keys.agentOrder,
        ],
        mode,
        k('agent:'),
        k('tool:'),
        seedId,
        JSON.stringify(writeAllPayload(state)),
      )) as number,
  };
}

export type RedisAdmin = ReturnType<typeof createRedisAdmin>;
