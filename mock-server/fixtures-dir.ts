import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The same module runs from two places: the sources (mock-server/fixtures-dir.ts, under tsx or vitest)
// and the built package (dist/mock-server/fixtures-dir.js). The package ships fixtures/ at its root,
// beside dist/, not a copy inside it, so the folder is one level further up from the built file.
const CANDIDATES = ['../fixtures/', '../../fixtures/'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

/**
 * The bundled fixtures folder: the default config, search results, fetch pages and QA scenarios the
 * runtime reads. Found from the sources and from the built package alike.
 */
export const FIXTURES_DIR: string =
  CANDIDATES.find((dir) => existsSync(join(dir, 'config', 'default.yaml'))) ??
  // Neither layout: keep the source layout's path, so the error that follows names a real place to look.
  (CANDIDATES[0] as string);

/** Where `--scenario NAME` looks: fixtures/scenarios/NAME.yaml. */
export const SCENARIOS_DIR: string = join(FIXTURES_DIR, 'scenarios');

/**
 * The names `--scenario` accepts for the bundled scenarios (their file names), read without parsing
 * them: `serve --help` lists these and must not load the YAML parser and schema to do it.
 */
export function bundledScenarioNames(dir: string = SCENARIOS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => name.slice(0, -'.yaml'.length));
}
