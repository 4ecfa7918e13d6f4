import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { declarationViolations, moduleNamesIn, packageOf } from './support/declaration-imports.ts';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package folder with these declaration files and the exports of the real package's shape. */
function packageWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'declaration-imports-'));
  made.push(root);
  const exports = {
    '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    './msw': { types: './dist/msw.d.ts', default: './dist/msw.js' },
    './testing': { types: './dist/testing.d.ts', default: './dist/testing.js' },
    './package.json': './package.json',
  };
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'the-package', exports }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the declarations check of the packed package', () => {
  it('reads every form of module reference a declaration file has', () => {
    const text = [
      "import { z } from 'zod';",
      "import type { Arbitrary } from 'fast-check';",
      "export { serve } from './serve.js';",
      "export * from '@scope/pkg/sub';",
      'declare const a: import("./agents.js").Agent;',
      "declare module 'expect' {}",
      '/// <reference types="node" />',
      "import './side-effect.js';",
      // a string constant that quotes an import is no import
      'export declare const HINT = "use globalThis.fetch, not (import { fetch } from \'undici\')";',
    ].join('\n');
    expect(moduleNamesIn(text).sort()).toEqual(
      [
        './agents.js',
        './serve.js',
        './side-effect.js',
        '@scope/pkg/sub',
        'expect',
        'fast-check',
        'node',
        'zod',
      ].sort(),
    );
    expect(['./x.js', 'node:http', '@scope/pkg/sub', 'zod/v4'].map(packageOf)).toEqual([
      undefined,
      'node:',
      '@scope/pkg',
      'zod',
    ]);
  });

  it('passes declarations that import only the public API packages, and each test tool in its own entry', () => {
    const root = packageWith({
      'dist/index.d.ts':
        "import { z } from 'zod';\nexport * from './store.js';\nimport type { Server } from 'node:http';",
      'dist/store.d.ts': 'export interface Store { get(key: string): Promise<string | null> }',
      'dist/msw.d.ts': "import { type HttpHandler } from 'msw';\nimport { gateway } from 'the-package';",
      'dist/testing.d.ts': "import type { Arbitrary } from 'fast-check';",
    });
    expect(declarationViolations(root)).toEqual([]);
  });

  it('names the file that imports an optional part’s dependency, reached or not', () => {
    const root = packageWith({
      'dist/index.d.ts': "import { z } from 'zod';",
      'dist/msw.d.ts': "import { type HttpHandler } from 'msw';",
      'dist/testing.d.ts': '',
      'dist/store/redis-connection.d.ts': "import { Redis } from 'ioredis';",
    });
    expect(declarationViolations(root)).toEqual([
      "dist/store/redis-connection.d.ts imports 'ioredis' (ioredis is no part of the public API)",
    ]);
  });

  it('names a test tool reached from an entry not meant for it, through relative and own-entry imports', () => {
    const root = packageWith({
      'dist/index.d.ts': "export * from './helpers/index.js';",
      'dist/helpers/index.d.ts': "export type { Handlers } from '../msw.js';",
      'dist/msw.d.ts': "import { type HttpHandler } from 'msw';",
      'dist/testing.d.ts': "import { handlers } from 'the-package/msw';",
    });
    expect(declarationViolations(root).sort()).toEqual([
      "dist/msw.d.ts imports 'msw' (reached from the entry '.', whose users need not have msw)",
      "dist/msw.d.ts imports 'msw' (reached from the entry './testing', whose users need not have msw)",
    ]);
  });
});
