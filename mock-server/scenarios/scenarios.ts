import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, describeIssues, readYamlFile } from '../config/load-config.ts';
import { SCENARIOS_DIR } from '../fixtures-dir.ts';
import { faultSpecSchema } from './faults.ts';
import { replaySchema } from './replay-schema.ts';

export { SCENARIOS_DIR };

/**
 * A QA scenario: a config overlay (limits, token lifetime, tools, agents...) laid over the gateway's base
 * config, faults armed from the start, optionally a frozen virtual clock, and optionally a recorded
 * exchange to replay (`replay`).
 */
const scenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be lower-case letters, digits and dashes'),
  description: z.string().min(1),
  /** Any part of a gateway config but the corpus; validated as one when the scenario is applied. */
  config: z
    .record(z.string(), z.unknown())
    .refine((config) => !('corpus' in config), {
      message:
        'a scenario cannot change the corpus (search and fetch fixtures load once, at start): set corpus in the gateway config',
      path: ['corpus'],
    })
    .default({}),
  faults: z.array(faultSpecSchema).default([]),
  clock: z
    .strictObject({
      frozen: z.boolean().default(false),
      /** ISO 8601 time the clock starts at (default: now). */
      start: z.iso.datetime({ offset: true }).optional(),
    })
    .optional(),
  /** What a recorded gateway answered, replayed per agent in order (replay-schema.ts); beyond it, the config. */
  replay: replaySchema.optional(),
});

export type Scenario = z.output<typeof scenarioSchema> & { source: string };
export type ScenarioInput = z.input<typeof scenarioSchema>;

/** Validates a scenario given as an object (admin API, tests). */
export function parseScenario(value: unknown, source = '(scenario object)'): Scenario {
  const parsed = scenarioSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(source, describeIssues(parsed.error), 'scenario');
  return { ...parsed.data, source };
}

/** Whether `name` is a scenario bundled in fixtures/scenarios (not a path). */
export function isBundledScenario(name: string): boolean {
  return /^[a-z0-9-]+$/.test(name) && existsSync(join(SCENARIOS_DIR, `${name}.yaml`));
}

/** A bundled scenario name (`burst-429`) or a path to a scenario file. */
function resolveScenarioFile(nameOrFile: string): string {
  if (isBundledScenario(nameOrFile)) return join(SCENARIOS_DIR, `${nameOrFile}.yaml`);
  const file = resolve(nameOrFile);
  if (existsSync(file)) return file;
  const known = listScenarios()
    .map((s) => s.name)
    .join(', ');
  throw new ConfigError(
    nameOrFile,
    [{ path: '', message: `no such scenario file or bundled scenario (bundled: ${known})` }],
    'scenario',
  );
}

/** Loads a scenario by bundled name or file path. */
export function loadScenario(nameOrFile: string): Scenario {
  const file = resolveScenarioFile(nameOrFile);
  return parseScenario(readYamlFile(file), file);
}

/** The bundled scenarios, for `--help`, the admin API and the README. */
export function listScenarios(dir = SCENARIOS_DIR): { name: string; description: string; file: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => {
      const file = join(dir, name);
      const scenario = loadScenario(file);
      return { name: scenario.name, description: scenario.description, file };
    });
}
