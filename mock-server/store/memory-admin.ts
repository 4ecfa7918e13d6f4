import type { VirtualClock } from '../clock.ts';
import type { AgentRegistry } from '../identity/agent-registry.ts';
import type { Policy } from '../policy/policy.ts';
import type { FaultInjector } from '../scenarios/faults.ts';
import type { AdminPort, ClockChange } from './state-port.ts';

/** The admin state of this process, changed in place: the admin port without a shared store. */
export interface LocalAdminState {
  registry: AgentRegistry;
  policy: Policy;
  faults: FaultInjector;
  clock: VirtualClock;
}

/** Puts a clock change in force on one clock (the same steps on every instance of a shared store). */
export function applyClockChange(clock: VirtualClock, change: ClockChange): void {
  if (change.kind === 'freeze') clock.freeze();
  else if (change.kind === 'resume') clock.resume();
  else if (change.kind === 'reset') clock.reset();
  else if (change.kind === 'advance') clock.advance(change.ms);
  else {
    // Frozen first, then set: the clock shows exactly the time, with no real time run in between.
    if (change.frozen === true) clock.freeze();
    clock.set(change.epochMs);
    if (change.frozen === false) clock.resume();
  }
}

/** The admin port in memory: each change made at once on this process's state. */
export function createMemoryAdmin(state: LocalAdminState): AdminPort {
  const { registry, policy, faults, clock } = state;
  return {
    createAgent(agent) {
      if (registry.get(agent.id)) return 'id_taken';
      if (registry.findByApiKey(agent.apiKey)) return 'key_taken';
      registry.add(agent);
      return 'created';
    },
    updateAgent: (id, patch) => registry.update(id, patch) !== undefined,
    revokeTokens: (id) => registry.revokeTokens(id),
    updateTool: (tool, patch) => policy.updateTool(tool, patch),
    armFault: (spec) => faults.add(spec),
    disarmFault: (id) => faults.remove(id),
    clearFaults: () => faults.clear(),
    changeClock: (change) => applyClockChange(clock, change),
    replaced: () => {},
  };
}
