import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../config/schema.ts';

/** An agent as the identity provider knows it at this moment. */
export interface Agent {
  id: string;
  name: string;
  apiKey: string;
  tier: string;
  allowlist: string[];
  disabled: boolean;
  /** Token generation: tokens minted under an older generation are revoked. */
  tokenGeneration: number;
  /**
   * Which life of this id the agent is: tokens name it, so a deleted agent's tokens stay dead when an agent
   * with the same id is created again. A configured agent's is `c<n>` (the same on every instance and
   * every process with the config: `c0`, then `c1` once it was gone and came back); an agent created
   * through the admin API draws a random one.
   */
  incarnation: string;
}

/** The changes the admin API may make to an agent (the transitions the spec leaves unshown). */
export type AgentPatch = Partial<Pick<Agent, 'name' | 'tier' | 'allowlist' | 'disabled'>>;

/** The fields the registry sets itself. */
type Kept = 'tokenGeneration' | 'incarnation';

const fromRecord = (record: AgentRecord): Omit<Agent, Kept> => ({
  id: record.id,
  name: record.name ?? record.id,
  apiKey: record.api_key,
  tier: record.tier,
  allowlist: [...record.allowlist],
  disabled: record.disabled,
});

/**
 * The identity provider's registry of agents, looked up by id (verification) and by API key (minting).
 * `reset()` restores the agents it was created with. Revocation outlives resets: an agent id's token
 * generation never goes back, so a revoked token stays revoked, and a token minted after it stays valid.
 */
export function createAgentRegistry(initialRecords: readonly AgentRecord[]) {
  let records = initialRecords;
  const byId = new Map<string, Agent>();
  const byKey = new Map<string, Agent>();
  // Counts changes, so derived data (the secret scanner's list of API keys) knows when to rebuild.
  let version = 0;
  // The token generation of every agent id ever known, kept across reset() and replace().
  const generations = new Map<string, number>();
  // Ids removed (reset, a scenario, another instance's state) since they were last present, and how many
  // times each configured id came back: its next life gets a new incarnation.
  const removed = new Set<string>();
  const lives = new Map<string, number>();
  const removeMissing = (kept: Iterable<string>) => {
    const next = new Set(kept);
    for (const id of byId.keys()) if (!next.has(id)) removed.add(id);
  };
  const configuredIncarnation = (id: string) => {
    if (removed.delete(id)) lives.set(id, (lives.get(id) ?? 0) + 1);
    return `c${lives.get(id) ?? 0}`;
  };

  const put = (fields: Omit<Agent, Kept>, incarnation: string): Agent => {
    const agent = { ...fields, tokenGeneration: generations.get(fields.id) ?? 0, incarnation };
    version += 1;
    byId.set(agent.id, agent);
    byKey.set(agent.apiKey, agent);
    return agent;
  };
  const reset = () => {
    removeMissing(records.map((record) => record.id));
    byId.clear();
    byKey.clear();
    for (const record of records) put(fromRecord(record), configuredIncarnation(record.id));
  };
  reset();

  return {
    get: (id: string): Agent | undefined => byId.get(id),
    findByApiKey: (apiKey: string): Agent | undefined => byKey.get(apiKey),
    list: (): Agent[] => [...byId.values()],
    /** Increases whenever an agent is added or changed. */
    get version() {
      return version;
    },
    /** Adds a new agent; the caller validated the fields. Fails on a duplicate id or API key. */
    add(agent: Omit<Agent, Kept>): Agent {
      if (byId.has(agent.id)) throw new Error(`agent "${agent.id}" already exists`);
      if (byKey.has(agent.apiKey)) throw new Error('api_key is already used by another agent');
      removed.delete(agent.id);
      return put({ ...agent, allowlist: [...agent.allowlist] }, randomUUID());
    },
    /** Applies a patch in place (the API key cannot change: it indexes the agent). */
    update(id: string, patch: AgentPatch): Agent | undefined {
      const agent = byId.get(id);
      if (!agent) return undefined;
      Object.assign(agent, patch);
      version += 1;
      return agent;
    },
    /** Revokes every token the agent holds now; tokens minted later are valid (even on a frozen clock). */
    revokeTokens(id: string): boolean {
      const agent = byId.get(id);
      if (!agent) return false;
      agent.tokenGeneration += 1;
      generations.set(id, agent.tokenGeneration);
      return true;
    },
    reset,
    /**
     * Takes over agents exactly as another instance has them (shared store), token generations included;
     * a generation never goes back.
     */
    restore(agents: readonly Agent[]) {
      removeMissing(agents.map((agent) => agent.id));
      byId.clear();
      byKey.clear();
      for (const agent of agents) {
        const generation = Math.max(agent.tokenGeneration, generations.get(agent.id) ?? 0);
        generations.set(agent.id, generation);
        // Its life as the other instance knows it (a state written before incarnations: the first life).
        const incarnation = agent.incarnation ?? 'c0';
        const life = /^c(\d+)$/.exec(incarnation);
        if (life) lives.set(agent.id, Math.max(Number(life[1]), lives.get(agent.id) ?? 0));
        removed.delete(agent.id);
        const copy = {
          ...agent,
          allowlist: [...agent.allowlist],
          tokenGeneration: generation,
          incarnation,
        };
        byId.set(copy.id, copy);
        byKey.set(copy.apiKey, copy);
      }
      version += 1;
    },
    /** Replaces the configured agents (a scenario) and resets to them. */
    replace(next: readonly AgentRecord[]) {
      records = next;
      reset();
    },
  };
}

export type AgentRegistry = ReturnType<typeof createAgentRegistry>;
