import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sharedNames, sourceFiles } from '../dev/structure.ts';

/*
 * A reader finds a file by its name: no two source files share one (a `report.ts` of the CLI and one of the
 * client report, a `types.ts` of the suite and one of the client report), but for the names dev/structure.ts
 * allows, each with why. And one name means one thing: `ToolName` is the vocabulary's (the tools this
 * project declares); the suite's any-string tool name is `CheckedToolName`.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const files = sourceFiles();

describe('source file names', () => {
  it('no two source files share a name a reader could confuse', () => {
    expect(
      sharedNames(files).map(({ paths }) => paths.join(' and ')),
      'rename one of each after what it holds',
    ).toEqual([]);
  });

  it('tells a shared name from an allowed one', () => {
    const probe = [
      'mock-server/a/types.ts',
      'conformance/types.ts',
      'mock-server/index.ts',
      'vocabulary/index.ts',
    ];
    const commands = ['cli/commands/report.ts', 'mock-server/client-report/report.ts'];
    expect(sharedNames([...probe, ...commands].map((path) => ({ path })))).toEqual([
      { name: 'types.ts', paths: ['mock-server/a/types.ts', 'conformance/types.ts'] },
    ]);
  });

  it('a type or interface named ToolName is declared once, in vocabulary/tools.ts', () => {
    const declaring = files.filter(({ path }) =>
      /\bexport\s+(type|interface)\s+ToolName\b/.test(readFileSync(join(root, path), 'utf8')),
    );
    expect(declaring.map(({ path }) => path)).toEqual(['vocabulary/tools.ts']);
  });
});
