import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The gateway's source has no import circle (type imports included: they tie modules together as much
 * as values do), and the layers import downwards only: the HTTP toolkit (`http/`) and the state (`store/`,
 * `limits/`, `identity/`, `journal/`) know nothing of the stages (`pipeline/`), the routes or the runtime.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../mock-server');
const IMPORT = /^(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s+'(\.[^']+)'/gm;

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const graph = new Map<string, string[]>();
for (const file of sources(root)) {
  const text = readFileSync(file, 'utf8');
  graph.set(
    relative(root, file),
    [...text.matchAll(IMPORT)].map((m) => relative(root, resolve(dirname(file), m[1] as string))),
  );
}

function cycles(): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string) => {
    if (stack.includes(file)) {
      found.push([...stack.slice(stack.indexOf(file)), file].join(' -> '));
      return;
    }
    if (done.has(file) || !graph.has(file)) return;
    stack.push(file);
    for (const dep of graph.get(file) ?? []) visit(dep);
    stack.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe('mock-server import graph', () => {
  it('reads the imports (the test sees the graph it judges)', () => {
    expect(graph.get('pipeline/admit.ts')).toContain('store/state-port.ts');
    expect(graph.get('routes/gateway-routes.ts')).toContain('pipeline/admit.ts');
  });

  it('has no import circle', () => {
    expect(cycles()).toEqual([]);
  });

  it.each(['http/', 'store/', 'limits/', 'identity/', 'journal/'])(
    '%s imports no stage, route, runtime or gateway',
    (layer) => {
      const upward = [...graph]
        .filter(([file]) => file.startsWith(layer))
        .flatMap(([file, deps]) =>
          deps
            .filter((dep) => /^(pipeline|routes)\/|^(runtime|gateway|core)\.ts$/.test(dep))
            .map((dep) => `${file} -> ${dep}`),
        );
      expect(upward).toEqual([]);
    },
  );
});
