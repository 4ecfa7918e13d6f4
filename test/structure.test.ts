import { describe, expect, it } from 'vitest';
import { LONG_FILE_LINES, longFiles, type SourceFile, sourceFiles } from '../dev/structure.ts';

describe('the source tree stays in small files that say what they are for', () => {
  const files = sourceFiles();

  it('reads the source folders (a check that reads nothing cannot pass)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'mock-server/core.ts')).toBe(true);
  });

  it(`every source file over ${LONG_FILE_LINES} lines says at its top why it is one file`, () => {
    const silent = longFiles(files).filter((f) => !f.saysWhy);
    expect(silent.map((f) => `${f.path} (${f.lines} lines)`)).toEqual([]);
  });

  it('tells a long file without a reason from one with it', () => {
    const probe: SourceFile[] = [
      { path: 'a.ts', lines: LONG_FILE_LINES + 1, saysWhy: false },
      { path: 'b.ts', lines: LONG_FILE_LINES, saysWhy: false },
    ];
    expect(longFiles(probe).map((f) => f.path)).toEqual(['a.ts']);
  });
});
