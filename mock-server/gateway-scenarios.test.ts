import { describe, expect, it } from 'vitest';
import { createGateway } from './gateway.ts';
import { scenarioClockChanges } from './gateway-scenarios.ts';

const START = '2030-01-01T00:00:00.000Z';
const scenario = (clock: { frozen?: boolean; start?: string }) => ({
  name: 'clock',
  description: 'clock',
  clock,
});

describe("a scenario's clock is set as the admin API sets it (applyClockChange)", () => {
  it('names the changes: back to real time, then the start (frozen there, or running on), or frozen now', () => {
    expect(scenarioClockChanges({ frozen: true, start: START })).toEqual([
      { kind: 'reset' },
      { kind: 'set', epochMs: Date.parse(START), frozen: true },
    ]);
    expect(scenarioClockChanges({ frozen: false, start: START })).toEqual([
      { kind: 'reset' },
      { kind: 'set', epochMs: Date.parse(START), frozen: false },
    ]);
    expect(scenarioClockChanges({ frozen: true })).toEqual([{ kind: 'reset' }, { kind: 'freeze' }]);
    expect(scenarioClockChanges({ frozen: false })).toEqual([{ kind: 'reset' }]);
  });

  it('a frozen start stands exactly at it; a running one runs from it; a clock moved before is reset', () => {
    const gateway = createGateway({ log: () => {} });
    gateway.clock.advance(3_600_000);
    gateway.clock.freeze();
    gateway.useScenario(scenario({ frozen: true, start: START }));
    expect(gateway.clock.frozen).toBe(true);
    expect(new Date(gateway.clock.now()).toISOString()).toBe(START);
    gateway.useScenario(scenario({ start: START }));
    expect(gateway.clock.frozen).toBe(false);
    expect(gateway.clock.now()).toBeGreaterThanOrEqual(Date.parse(START));
    gateway.clock.advance(3_600_000);
    gateway.useScenario(scenario({ frozen: true }));
    expect(gateway.clock.frozen).toBe(true);
    expect(Math.abs(gateway.clock.now() - Date.now())).toBeLessThan(60_000); // real time again, not an hour on
  });
});
