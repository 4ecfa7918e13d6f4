/**
 * `npm run structure`: the source folders with their files and line counts, and the files over the size
 * limit. A source file over LONG_FILE_LINES lines must say at its top why it is one file (a comment in its
 * first lines with the words "on purpose"); test/structure.test.ts holds every file to that. And the names
 * two source files share, which a reader could confuse (test/source-file-names.test.ts keeps them none).
 *
 * Usage: npm run structure [-- --long]   (--long: only the files over the limit and the shared names)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Past this many lines a source file is split by job, or says why not. */
export const LONG_FILE_LINES = 400;
/** The folders of source code (tests, fixtures and generated files aside). */
export const SOURCE_FOLDERS = ['vocabulary', 'mock-server', 'conformance', 'cli', 'dev'];

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface SourceFile {
  path: string;
  lines: number;
  /** Whether its first lines say why it is long ("on purpose"). */
  saysWhy: boolean;
}

/** Every tracked source file of SOURCE_FOLDERS, tests aside, with its line count. */
export function sourceFiles(root = ROOT): SourceFile[] {
  const tracked = execFileSync('git', ['ls-files', ...SOURCE_FOLDERS], { cwd: root, encoding: 'utf8' });
  return tracked
    .split('\n')
    .filter((path) => /\.(ts|mjs|js)$/.test(path) && !/\.test\.ts$/.test(path))
    .map((path) => {
      const text = readFileSync(join(root, path), 'utf8');
      const head = text.split('\n').slice(0, 20).join('\n');
      return { path, lines: text.split('\n').length - 1, saysWhy: /on purpose/i.test(head) };
    });
}

/** The files over the limit, longest first. */
export const longFiles = (files: SourceFile[]) =>
  files.filter((f) => f.lines > LONG_FILE_LINES).sort((a, b) => b.lines - a.lines);

/** Names more than one source file may carry, each with why a reader cannot confuse them. */
export const SHARED_NAMES: Readonly<Record<string, string>> = {
  'index.ts': "a folder's entry point: the folder is its name",
};
/** Folders whose files are named after something outside the code, which a reader knows them by. */
export const NAMED_FROM_OUTSIDE: Readonly<Record<string, string>> = {
  'cli/commands': 'one file per CLI command, named after the command (`agent-gateway report`, `proxy`)',
};

/** The file names two or more source files share (the allowed ones aside), each with its files. */
export function sharedNames(files: readonly Pick<SourceFile, 'path'>[]): { name: string; paths: string[] }[] {
  const byName = new Map<string, string[]>();
  for (const { path } of files) {
    const name = basename(path);
    if (SHARED_NAMES[name] || Object.keys(NAMED_FROM_OUTSIDE).some((folder) => path.startsWith(`${folder}/`)))
      continue;
    byName.set(name, [...(byName.get(name) ?? []), path]);
  }
  return [...byName]
    .filter(([, paths]) => paths.length > 1)
    .map(([name, paths]) => ({ name, paths }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function main(argv: string[]) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write('Usage: npm run structure [-- --long]\n');
    return;
  }
  const files = sourceFiles();
  if (!argv.includes('--long')) {
    const byFolder = new Map<string, SourceFile[]>();
    for (const f of files) byFolder.set(dirname(f.path), [...(byFolder.get(dirname(f.path)) ?? []), f]);
    for (const [folder, inside] of [...byFolder].sort(([a], [b]) => a.localeCompare(b))) {
      const total = inside.reduce((n, f) => n + f.lines, 0);
      const list = inside.map((f) => `${f.path.slice(folder.length + 1)} ${f.lines}`).join(', ');
      process.stdout.write(`${folder}/  ${total} lines: ${list}\n`);
    }
  }
  const long = longFiles(files);
  process.stdout.write(`\n${long.length} source file(s) over ${LONG_FILE_LINES} lines:\n`);
  for (const f of long)
    process.stdout.write(`  ${f.path} ${f.lines}  ${f.saysWhy ? 'says why at its top' : 'SAYS NOT WHY'}\n`);
  const shared = sharedNames(files);
  process.stdout.write(`\n${shared.length} file name(s) shared by source files:\n`);
  for (const { name, paths } of shared) process.stdout.write(`  ${name}: ${paths.join(', ')}\n`);
  if (long.some((f) => !f.saysWhy) || shared.length > 0) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
