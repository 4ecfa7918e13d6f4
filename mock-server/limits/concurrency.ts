/**
 * Counts each agent's requests in flight. The journal records the count every request saw, and the
 * optional per-agent limit turns the excess into 429s.
 */
export function createConcurrencyTracker() {
  const inFlight = new Map<string, number>();
  return {
    /** How many requests the agent has in flight now. */
    current: (agentId: string) => inFlight.get(agentId) ?? 0,
    /** Marks one more request in flight and returns the new count. */
    enter(agentId: string): number {
      const count = (inFlight.get(agentId) ?? 0) + 1;
      inFlight.set(agentId, count);
      return count;
    },
    leave(agentId: string): void {
      // An agent's count stays, at 0, once it has none in flight (bounded by the agents known): deleting it
      // and adding it again at the next request made V8 rebuild the map's table every few requests, in the
      // old generation (the map lives long), which only a full collection frees (issue 35).
      inFlight.set(agentId, Math.max(0, (inFlight.get(agentId) ?? 1) - 1));
    },
  };
}

export type ConcurrencyTracker = ReturnType<typeof createConcurrencyTracker>;
