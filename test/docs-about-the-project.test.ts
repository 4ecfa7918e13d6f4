import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The guides describe the project as it is now, for its users: not how it got there. History lives in
 * CHANGELOG.md, by version. And what architecture.md names in the code (files, folders) exists.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const guides = [
  'README.md',
  'python/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Phrases of a work diary: issue numbers, waves and sessions of the work, before/after logs. */
const DIARY = [
  { name: 'an issue number', pattern: /\bissues? #?\d+\b|\(#\d+\)/i },
  { name: 'a wave of the work', pattern: /\bwave \d+\b/i },
  {
    name: 'a session of the work',
    pattern:
      /\b(this|that|the) session's (start|starting build)|\b(first|second|third|fourth|fifth) session\b/i,
  },
  { name: 'a run log heading', pattern: /^#+ .*\b(before|after)\b.*\b(this work|the change)\b/im },
];

describe('the guides are about the project, not a diary of its work', () => {
  for (const file of guides) {
    it(`${file} names no issue, wave or session of the work`, () => {
      const lines = readFileSync(join(root, file), 'utf8').split('\n');
      const found: string[] = [];
      lines.forEach((line, i) => {
        for (const { name, pattern } of DIARY)
          if (pattern.test(line)) found.push(`${file}:${i + 1}: ${name}: ${line.trim()}`);
      });
      expect(found, 'history belongs in CHANGELOG.md, by version').toEqual([]);
    });
  }
});

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === '.git' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push(`${relative(root, path)}/`);
      sourceFiles(path, out);
    } else out.push(relative(root, path));
  }
  return out;
}

describe('docs/architecture.md names only what exists', () => {
  it('every source file or folder it names in code spans is in the tree', () => {
    const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    const files = sourceFiles(root).map((f) => `/${f}`);
    const named = new Set(
      [...text.matchAll(/`([\w.-]+(?:\/[\w.-]+)*\/?)`/g)]
        .map((m) => m[1] ?? '')
        .filter((n) => n.includes('/') || /\.(ts|mts|mjs|js|py|yaml|json)$/.test(n))
        // build output (made by `npm run build`) and bare file endings are not in a clone's tree
        .filter((n) => !/^(node|npm|npx|https?|text|application|dist)\b/.test(n) && !/^\.[\w.]+$/.test(n)),
    );
    const missing = [...named].filter((n) => !files.some((f) => f.endsWith(`/${n}`)));
    expect(missing, 'architecture.md names files that are not in the tree').toEqual([]);
  });
});
