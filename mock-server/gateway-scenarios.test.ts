import { describe, expect, it } from 'vitest';
import { createClock } from './clock.ts';
import { loadConfig } from './config/load-config.ts';
import { createGateway } from './gateway.ts';
import { createScenarioControl, scenarioClockChanges } from './gateway-scenarios.ts';

/** A control over a fresh gateway's runtime (the gateway's own control left unused). */
function control(initial?: string) {
  const clock = createClock({ frozen: true, startAt: Date.parse('2026-05-01T10:00:00Z') });
  const { runtime } = createGateway({ clock, log: () => {} });
  const baseConfig = loadConfig();
  return { runtime, scenarios: createScenarioControl({ runtime, base: {}, baseConfig, clock, initial }) };
}

describe('createScenarioControl', () => {
  it('lays a scenario over the base config and remembers what it was loaded from', () => {
    const { runtime, scenarios } = control();
    expect(scenarios.scenario).toBeUndefined();
    scenarios.useScenario('search-disabled');
    expect(scenarios.scenario?.name).toBe('search-disabled');
    expect(scenarios.input).toBe('search-disabled');
    expect(runtime.policy.tools['web.search']?.enabled).toBe(false);
    scenarios.resetToBase();
    expect([scenarios.scenario, scenarios.input]).toEqual([undefined, undefined]);
    expect(runtime.policy.tools['web.search']?.enabled).toBe(true);
  });

  it('resets to the scenario the gateway started with, or to the base config without one', () => {
    const started = control('search-disabled');
    started.scenarios.useScenario('burst-429');
    started.scenarios.reset();
    expect(started.scenarios.scenario?.name).toBe('search-disabled');
    const plain = control();
    plain.scenarios.useScenario('burst-429');
    plain.scenarios.reset();
    expect(plain.scenarios.scenario).toBeUndefined();
  });

  it('refuses a scenario that declares a tool the gateway does not have (its routes are built once)', () => {
    const { scenarios } = control();
    expect(() =>
      scenarios.useScenario({
        name: 'adds',
        description: 'adds a tool',
        config: { tools: { 'web.extract': { path: '/v1/web/extract' } } },
      }),
    ).toThrow("a scenario changes a tool's policy, never adds one");
  });

  it("names a bad scenario config's paths under config.", () => {
    const { scenarios } = control();
    expect(() =>
      scenarios.useScenario({
        name: 'bad',
        description: 'a tool without a path',
        config: { tools: { 'web.extract': { tiers: [] } } },
      }),
    ).toThrow('config.tools["web.extract"].path');
  });
});

const START = '2030-01-01T00:00:00.000Z';

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
    // Real time moves a millisecond at every reading: a clock set and then frozen would stop past the start.
    let real = Date.parse('2026-05-01T10:00:00Z');
    const clock = createClock({ realNow: () => ++real });
    const gateway = createGateway({ clock, log: () => {} });
    const scenario = (c: { frozen?: boolean; start?: string }) => ({
      name: 'clock',
      description: 'c',
      clock: c,
    });
    clock.advance(3_600_000);
    clock.freeze();
    gateway.useScenario(scenario({ frozen: true, start: START }));
    expect([clock.frozen, clock.now(), clock.now()]).toEqual([true, Date.parse(START), Date.parse(START)]);
    gateway.useScenario(scenario({ start: START }));
    expect(clock.frozen).toBe(false);
    expect(clock.now() - Date.parse(START)).toBeGreaterThan(0);
    expect(clock.now() - Date.parse(START)).toBeLessThan(100); // readings, not time: it ran on from the start
    clock.advance(3_600_000);
    gateway.useScenario(scenario({ frozen: true }));
    expect(clock.frozen).toBe(true);
    const at = clock.now();
    expect(real - at).toBeGreaterThanOrEqual(0); // real time again, frozen: not an hour on
    expect(real - at).toBeLessThan(100);
  });
});
