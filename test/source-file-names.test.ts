import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * A reader finds a file by its name: no two source files share one (a `report.ts` of the CLI and one of the
 * client report, a `types.ts` of the suite and one of the client report), but for the names below, each
 * with the reason a reader cannot confuse them. And one name means one thing: `ToolName` is the
 * vocabulary's (the tools this project declares); the suite's any-string tool name is `CheckedToolName`.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['vocabulary', 'mock-server', 'conformance', 'cli', 'dev'];

/** Names more than one source file may carry, each with why. */
const SHARED_NAMES: Record<string, string> = {
  'index.ts': "a folder's entry point: the folder is its name",
};
/** Folders whose files are named after something outside the code, which a reader knows them by. */
const NAMED_FROM_OUTSIDE: Record<string, string> = {
  'cli/commands': 'one file per CLI command, named after the command (`agent-gateway report`, `proxy`)',
};

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter(
        (name) =>
          /\.(ts|mts|mjs)$/.test(name) && !/\.test\.\w+$/.test(name) && !name.includes('node_modules'),
      )
      .map((name) => `${folder}/${name.replaceAll('\\', '/')}`),
  );
}

describe('source file names', () => {
  it('no two source files share a name a reader could confuse', () => {
    const byName = new Map<string, string[]>();
    for (const file of sourceFiles()) {
      if (Object.keys(NAMED_FROM_OUTSIDE).some((folder) => file.startsWith(`${folder}/`))) continue;
      const name = basename(file);
      if (SHARED_NAMES[name]) continue;
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    const shared = [...byName.values()]
      .filter((files) => files.length > 1)
      .map((files) => files.join(' and '));
    expect(shared, 'rename one of each pair after what it holds').toEqual([]);
  });

  it('a type or interface named ToolName is declared once, in vocabulary/tools.ts', () => {
    const declaring = sourceFiles().filter((file) =>
      /\bexport\s+(type|interface)\s+ToolName\b/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(declaring).toEqual(['vocabulary/tools.ts']);
  });
});
