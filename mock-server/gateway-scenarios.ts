import type { VirtualClock } from './clock.ts';
import { ConfigError, deepMerge, loadConfig, type ResolvedConfig } from './config/load-config.ts';
import type { GatewayConfigOverlay } from './config/schema.ts';
import { applyConfig, type Runtime } from './runtime.ts';
import { faultTargets, unknownFaultTarget } from './scenarios/faults.ts';
import { createReplayTracks } from './scenarios/replay-tracks.ts';
import { loadScenario, parseScenario, type Scenario, type ScenarioInput } from './scenarios/scenarios.ts';
import { applyClockChange } from './store/memory-admin.ts';
import type { ClockChange } from './store/state-port.ts';

/**
 * The clock changes a scenario's `clock` makes, as the admin API makes them (`applyClockChange`): back to
 * real time, then its start, stopped there exactly when `frozen`, or frozen now without a start.
 */
export const scenarioClockChanges = ({ frozen, start }: NonNullable<Scenario['clock']>): ClockChange[] => [
  { kind: 'reset' },
  ...(start !== undefined
    ? [{ kind: 'set', epochMs: Date.parse(start), frozen } as const]
    : frozen
      ? [{ kind: 'freeze' } as const]
      : []),
];

/** What a gateway's scenarios are laid over and act on. */
interface ScenarioControlParts {
  runtime: Runtime;
  /** The caller's file and overlay (or resolved config), which a scenario's config is laid over. */
  base: { file?: string; config?: GatewayConfigOverlay };
  baseConfig: ResolvedConfig;
  clock: VirtualClock;
  /** The scenario the gateway was created with (`serve --scenario`): what `reset` goes back to. */
  initial?: string | ScenarioInput;
}

/**
 * A gateway's scenarios: back to the base config, a scenario laid over it (config, faults, clock), and reset
 * to how the gateway started. Keeps the scenario in force and what it was loaded from (for the other
 * instances of a shared store to load it too).
 */
export function createScenarioControl({ runtime, base, baseConfig, clock, initial }: ScenarioControlParts) {
  let scenario: Scenario | undefined;
  // What the scenario in force was loaded from, for other instances to load it too (shared store).
  let scenarioInput: string | ScenarioInput | undefined;

  /** Back to the base config: agents, tools, limits, faults, idempotency keys and the journal start over. */
  const resetToBase = () => {
    applyConfig(runtime, baseConfig);
    runtime.faults.clear();
    runtime.journal.clear();
    runtime.replay = undefined;
    scenario = undefined;
    scenarioInput = undefined;
  };

  /** Resets, then lays the scenario over the base config, arms its faults and sets its clock. */
  const useScenario = (input: string | ScenarioInput) => {
    const next = typeof input === 'string' ? loadScenario(input) : parseScenario(input);
    let config: ResolvedConfig;
    try {
      config = loadConfig({
        file: base.file,
        config: deepMerge(base.config ?? {}, next.config) as GatewayConfigOverlay,
      });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new ConfigError(
        next.source,
        error.issues.map((i) => ({ path: `config.${i.path}`, message: i.message })),
      );
    }
    // The gateway's routes are built once, from its own config: a scenario changes tools' policies only.
    const added = Object.keys(config.tools).filter((tool) => !Object.hasOwn(baseConfig.tools, tool));
    if (added.length > 0)
      throw new ConfigError(
        next.source,
        added.map((tool) => ({
          path: `config.tools.${tool}`,
          message: `a scenario changes a tool's policy, never adds one: declare ${tool} in the gateway's config`,
        })),
      );
    // A fault names an endpoint or tool of this gateway (its extra tools included), or it would never strike.
    const targets = faultTargets(runtime.tools);
    const strayFaults = next.faults.flatMap((fault, i) => {
      const message = unknownFaultTarget(fault, targets);
      return message === undefined ? [] : [{ path: `faults[${i}].match.operation`, message }];
    });
    if (strayFaults.length > 0) throw new ConfigError(next.source, strayFaults, 'scenario');
    resetToBase();
    applyConfig(runtime, { ...config, source: `${baseConfig.source}, with scenario ${next.source}` });
    for (const fault of next.faults) runtime.faults.add(fault);
    if (next.replay) runtime.replay = createReplayTracks(next.replay);
    if (next.clock) for (const change of scenarioClockChanges(next.clock)) applyClockChange(clock, change);
    scenario = next;
    scenarioInput = input;
    return next;
  };
  /**
   * Back to how the gateway started: its config, and the scenario it was created with (`serve --scenario`),
   * which QA resets to between runs. A scenario loaded later is dropped.
   */
  const reset = () => {
    if (initial) useScenario(initial);
    else resetToBase();
  };

  return {
    resetToBase,
    useScenario,
    reset,
    /** The scenario in force, if any. */
    get scenario(): Scenario | undefined {
      return scenario;
    },
    /** What the scenario in force was loaded from, if any. */
    get input(): string | ScenarioInput | undefined {
      return scenarioInput;
    },
  };
}
