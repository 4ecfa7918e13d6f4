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
      const count = (inFlight.get(agentId) ?? 1) - 1;
      if (count <= 0) inFlight.delete(agentId);
      else inFlight.set(agentId, count);
    },
  };
}

export type ConcurrencyTracker = ReturnType<typeof createConcurrencyTracker>;
