import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownFileExportsOf, publicEntryPoints } from './own-file-exports.ts';

const dir = mkdtempSync(join(tmpdir(), 'own-file-exports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('exports used only in their own file', () => {
  it('lists an export no other file imports, and none another file uses, re-exports or that is a default', () => {
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true },
      }),
    );
    writeFileSync(
      join(dir, 'a.ts'),
      [
        'export const used = 1;',
        'export const reExported = 2;',
        'export function ownOnly() { return 3; }',
        'export type OwnType = { n: number };',
        'const local: OwnType = { n: ownOnly() };',
        'const listed = local;',
        'export { listed };',
        'export default local;',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'b.ts'),
      "import { used } from './a.ts';\nexport { reExported } from './a.ts';\nused;\n",
    );
    const own = ownFileExportsOf(join(dir, 'tsconfig.json'), (f) => f.startsWith(dir));
    expect(own.map(({ file, name, line }) => `${file.slice(dir.length + 1)}:${line} ${name}`).sort()).toEqual(
      ['a.ts:3 ownOnly', 'a.ts:4 OwnType', 'a.ts:7 listed'],
    );
  });

  it("reads the public entry points from package.json's exports", () => {
    const entries = [...publicEntryPoints(join(import.meta.dirname, '..'))].map((f) =>
      f.split('/').slice(-2).join('/'),
    );
    expect(entries).toContain('conformance/index.ts');
    expect(entries).toContain('mock-server/index.ts');
  });
});
