/**
 * What the package's declarations (`dist/**\/*.d.ts`) import from other packages. A user's `tsc` with
 * `skipLibCheck: false` checks every declaration file it reaches, ours and those they import: each package
 * named here is one whose next release can break a user's type check. So the declarations may name only the
 * packages the public API is made of (zod, fast-check: their types are in our signatures), Node's own
 * modules, and, in the entry for a test tool only, that tool (a user of `./msw` has msw installed). An
 * optional part's dependency (ioredis: Redis support) is never named: it is loaded when asked for, behind
 * the package's own small client type (mock-server/store/redis-client.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Packages any declaration file may import: dependencies whose types are part of the public API. */
export const ALLOWED_EVERYWHERE = ['zod', 'fast-check', '@faker-js/faker'] as const;

/** Packages one entry's declarations may reach besides those: the test tool that entry is for. */
export const ALLOWED_BY_ENTRY: Readonly<Record<string, readonly string[]>> = {
  './msw': ['msw'],
  './conformance/vitest': ['vitest'],
  './testing/vitest': ['vitest'],
  './testing/jest': ['@jest/globals', 'expect'],
};

/**
 * The module names a declaration file refers to: `import`/`export ... from`, `import("...")` types,
 * `declare module "..."` augmentations and `/// <reference types="..." />`.
 */
export function moduleNamesIn(text: string): string[] {
  const names = new Set<string>();
  const patterns = [
    // an import clause holds no quote: `from '...'` inside a string constant's text is no import
    /^\s*(?:import|export)\s[^;'"`]*?\sfrom\s+['"]([^'"]+)['"]/gm,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*declare\s+module\s+['"]([^'"]+)['"]/gm,
    /\/\/\/\s*<reference\s+types\s*=\s*['"]([^'"]+)['"]/g,
  ];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) names.add(m[1] as string);
  return [...names];
}

/** The package a module name belongs to (`@scope/name`, `name`), `node:` for Node's own, none if relative. */
export function packageOf(name: string): string | undefined {
  if (name.startsWith('.') || name.startsWith('/')) return undefined;
  if (name.startsWith('node:')) return 'node:';
  const parts = name.split('/');
  return name.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** A relative import of a declaration file, resolved to the declaration file it means (`./x.js` -> `./x.d.ts`). */
function declarationOf(from: string, name: string): string | undefined {
  const base = resolve(dirname(from), name);
  const candidates = [
    base.replace(/\.js$/, '.d.ts'),
    base.replace(/\.mjs$/, '.d.mts'),
    base.replace(/\.ts$/, '.d.ts'),
    `${base}.d.ts`,
    join(base, 'index.d.ts'),
  ];
  return candidates.find((c) => /\.d\.m?ts$/.test(c) && existsSync(c));
}

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string }>;
}

const typesOf = (manifest: Manifest, entry: string) => {
  const target = manifest.exports[entry];
  return typeof target === 'string' || target === undefined ? undefined : target.types;
};

export interface ForeignImport {
  package: string;
  /** The declaration file that imports it, relative to the package root. */
  file: string;
  module: string;
}

/**
 * Every import of another package in the declaration files reached from the entry's types (all files of
 * dist/ when no entry is given). An import of the package's own entry (`name/testing`) is followed.
 */
export function foreignImports(packageRoot: string, manifest: Manifest, entry?: string): ForeignImport[] {
  const files = entry ? reachable(packageRoot, manifest, entry) : allDeclarations(join(packageRoot, 'dist'));
  const found: ForeignImport[] = [];
  for (const file of files)
    for (const name of moduleNamesIn(readFileSync(file, 'utf8'))) {
      const pkg = packageOf(name);
      if (pkg && pkg !== 'node:' && pkg !== manifest.name)
        found.push({ package: pkg, file: relative(packageRoot, file), module: name });
    }
  return found;
}

function allDeclarations(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.d\.m?ts$/.test(f))
    .map((f) => join(dir, f));
}

function reachable(packageRoot: string, manifest: Manifest, entry: string): string[] {
  const seen = new Set<string>();
  const start = typesOf(manifest, entry);
  const queue = start ? [resolve(packageRoot, start)] : [];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const name of moduleNamesIn(readFileSync(file, 'utf8'))) {
      const pkg = packageOf(name);
      if (pkg === undefined) {
        const next = declarationOf(file, name);
        if (next) queue.push(next);
      } else if (pkg === manifest.name) {
        const types = typesOf(manifest, `.${name.slice(pkg.length)}`);
        if (types) queue.push(resolve(packageRoot, types));
      }
    }
  }
  return [...seen];
}

/**
 * The imports a package's declarations must not have, each as one line naming the file: in any file, a
 * package outside every allowance; from each entry of `exports`, one outside that entry's allowance. The
 * package's own name (an entry importing another) is allowed.
 */
export function declarationViolations(packageRoot: string): string[] {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as Manifest;
  const anyEntry = new Set([...ALLOWED_EVERYWHERE, ...Object.values(ALLOWED_BY_ENTRY).flat()]);
  const line = (i: ForeignImport, why: string) => `${i.file} imports '${i.module}' (${why})`;
  const problems = foreignImports(packageRoot, manifest)
    .filter((i) => !anyEntry.has(i.package))
    .map((i) => line(i, `${i.package} is no part of the public API`));
  for (const entry of Object.keys(manifest.exports)) {
    const allowed = new Set([...ALLOWED_EVERYWHERE, ...(ALLOWED_BY_ENTRY[entry] ?? [])]);
    for (const i of foreignImports(packageRoot, manifest, entry))
      if (!allowed.has(i.package) && anyEntry.has(i.package))
        problems.push(line(i, `reached from the entry '${entry}', whose users need not have ${i.package}`));
  }
  return [...new Set(problems)];
}
