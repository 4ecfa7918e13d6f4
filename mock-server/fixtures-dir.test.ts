import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE } from './config/load-config.ts';
import { bundledScenarioNames, FIXTURES_DIR, SCENARIOS_DIR } from './fixtures-dir.ts';
import { listScenarios } from './scenarios/scenarios.ts';

describe('the bundled fixtures folder', () => {
  it('is found from the sources: the default config, corpus and scenarios are in it', () => {
    expect(DEFAULT_CONFIG_FILE).toBe(join(FIXTURES_DIR, 'config', 'default.yaml'));
    for (const part of ['config/default.yaml', 'search', 'pages', 'scenarios'])
      expect(existsSync(join(FIXTURES_DIR, part)), part).toBe(true);
  });

  it('lists the scenario names --scenario accepts without parsing them, the same as the parsed list', () => {
    const parsed = listScenarios(SCENARIOS_DIR).map((s) => s.name);
    expect(parsed.length).toBeGreaterThan(0);
    expect(bundledScenarioNames()).toEqual(parsed);
  });

  it('lists no scenario from a folder that does not exist', () => {
    expect(bundledScenarioNames(join(FIXTURES_DIR, 'no-such-folder'))).toEqual([]);
  });
});
