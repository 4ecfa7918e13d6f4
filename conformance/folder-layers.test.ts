import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The suite's folders are its parts, in layers: each imports only the folders before it in LAYERS (and
 * itself), so a part can be read, and changed, knowing only what lies below it. model/ is what every part
 * shares (a request and its exchange, a token as a check describes it, a check's result, the error of a run
 * that cannot work); the root holds the package's entry points (index.ts, vitest.ts).
 */
const LAYERS = ['model', 'tokens', 'arbitraries', 'client', 'suite', 'checks', 'run', 'reporters', '.'];
const root = import.meta.dirname;
const IMPORT = /^(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s+'(\.[^']+)'/gm;

const folderOf = (file: string) => (file.includes('/') ? (file.split('/')[0] as string) : '.');

const imports = readdirSync(root, { recursive: true, encoding: 'utf8' })
  .map((name) => name.replaceAll('\\', '/'))
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)]
      .map((m) => relative(root, resolve(root, dirname(file), m[1] as string)).replaceAll('\\', '/'))
      .filter((target) => !target.startsWith('..'))
      .map((target) => ({ file, target })),
  );

describe('conformance/ folders import downwards only', () => {
  it('reads the imports (the test sees the graph it judges)', () => {
    expect(imports).toContainEqual({ file: 'run/runner.ts', target: 'checks/index.ts' });
  });

  it('every folder is a layer', () => {
    const folders = new Set(imports.flatMap(({ file, target }) => [folderOf(file), folderOf(target)]));
    expect([...folders].filter((folder) => !LAYERS.includes(folder))).toEqual([]);
  });

  it('no folder imports one above it', () => {
    const upward = imports
      .filter(({ file, target }) => LAYERS.indexOf(folderOf(target)) > LAYERS.indexOf(folderOf(file)))
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(upward).toEqual([]);
  });
});
