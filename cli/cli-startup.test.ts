import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What the CLI loads before a command runs, read off the sources: the closure of static value imports
 * (`import type` and `import()` load nothing at start). A speed target cannot be a unit test (CI machines
 * are loaded), but what is loaded can: the figures themselves come from `npm run bench:cli`.
 */
const here = dirname(fileURLToPath(import.meta.url));
const STATIC_IMPORT = /^import\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?'([^']+)';/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*'([^']+)'\s*\)/g;

function staticImports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)].map((m) => m[1] as string);
}

/** Every module loaded by importing `entries`: relative files as paths, packages by name. */
function closure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else seen.add(specifier.startsWith('node:') ? specifier : (specifier.split('/')[0] as string));
    }
  };
  for (const entry of entries) visit(entry);
  return seen;
}

const HEAVY = ['fast-check', '@faker-js', 'msw', 'hono', '@hono', 'vitest'];
const isHeavy = (module: string) =>
  HEAVY.includes(module) ||
  module.includes('/conformance/checks/') ||
  module.endsWith('/conformance/run/runner.ts') ||
  module.endsWith('/mock-server/gateway.ts');

describe('CLI start', () => {
  const cli = resolve(here, 'cli.ts');

  it('--help (every command registered) loads neither the suite, nor the gateway, nor zod', () => {
    const loaded = [...closure([cli])];
    expect(loaded.filter(isHeavy)).toEqual([]);
    expect(loaded).not.toContain('zod');
    expect(loaded).not.toContain('yaml');
    // The closure is real: it did follow the commands.
    expect(loaded).toContain(resolve(here, 'commands/check.ts'));
    expect(loaded).toContain('commander');
  });

  it('token loads the config and the identity provider, not the gateway, its tools or the suite', () => {
    const token = resolve(here, 'commands/token.ts');
    const onRun = [...readFileSync(token, 'utf8').matchAll(DYNAMIC_IMPORT)].map((m) =>
      resolve(dirname(token), m[1] as string),
    );
    expect(onRun).toContain(resolve(here, '../mock-server/identity/identity-provider.ts'));
    const loaded = [...closure([cli, ...onRun])];
    expect(loaded.filter(isHeavy)).toEqual([]);
    expect(loaded).toContain('zod');
  });

  it('the commands that need the gateway or the suite load them when they run', () => {
    const check = readFileSync(resolve(here, 'commands/check.ts'), 'utf8');
    const checkRun = readFileSync(resolve(here, 'commands/check-run.ts'), 'utf8');
    const serve = readFileSync(resolve(here, 'commands/serve.ts'), 'utf8');
    // check.ts declares the flags; its action (check-run.ts) is loaded when it runs, and loads the runner.
    expect([...check.matchAll(DYNAMIC_IMPORT)].map((m) => m[1])).toContain('./check-run.ts');
    expect([...checkRun.matchAll(DYNAMIC_IMPORT)].map((m) => m[1])).toContain(
      '../../conformance/run/runner.ts',
    );
    expect([...serve.matchAll(DYNAMIC_IMPORT)].map((m) => m[1])).toContain('../../mock-server/gateway.ts');
  });
});
