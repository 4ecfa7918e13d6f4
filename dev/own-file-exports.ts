/**
 * Lists the exports no other file uses: an `export` whose every reference (found by the TypeScript
 * compiler's find-references over the project's program, tests and dev scripts included) is in its own file.
 * Such an export says "others lean on this" when none do; without the keyword a reader knows the name is
 * the file's own. The package's entry points (package.json "exports") are the public API and never listed.
 *
 *   npx tsx dev/own-file-exports.ts [--count]
 *
 * It drives the compiler through TypeScript 7's API (typescript/unstable/sync), which starts the compiler
 * as a child process for the run.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Node, SyntaxKind } from 'typescript/unstable/ast';
import { API, type Checker, type Program } from 'typescript/unstable/sync';

interface OwnFileExport {
  file: string;
  name: string;
  line: number;
}

type Statement = Node & {
  modifiers?: readonly Node[];
  name?: Node & { text?: string };
  declarationList?: { declarations: readonly (Node & { name: Node & { text?: string } })[] };
  moduleSpecifier?: Node;
  exportClause?: Node & { elements?: readonly (Node & { name: Node & { text?: string } })[] };
};

/** The names a top-level statement exports itself (not `export … from`, not a default export). */
function exportedNames(statement: Statement): (Node & { text?: string })[] {
  if (statement.kind === SyntaxKind.ExportDeclaration)
    return statement.moduleSpecifier ? [] : (statement.exportClause?.elements ?? []).map((e) => e.name);
  const kinds = (statement.modifiers ?? []).map((m) => m.kind);
  if (!kinds.includes(SyntaxKind.ExportKeyword) || kinds.includes(SyntaxKind.DefaultKeyword)) return [];
  if (statement.declarationList) return statement.declarationList.declarations.map((d) => d.name);
  return statement.name ? [statement.name] : [];
}

/** The exports of `files` referenced in their own file only. */
function ownFileExports(program: Program, checker: Checker, files: readonly string[]): OwnFileExport[] {
  const found: OwnFileExport[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) continue;
    for (const statement of source.statements as readonly Statement[]) {
      for (const name of exportedNames(statement)) {
        if (name.kind !== SyntaxKind.Identifier || name.text === undefined) continue;
        const entries = checker.getReferencedSymbolsForNode(name, name.pos);
        if (entries.every((entry) => entry.references.every((r) => r.path === file)))
          found.push({
            file,
            name: name.text,
            line: source.getLineAndCharacterOfPosition(name.end).line + 1,
          });
      }
    }
  }
  return found;
}

/** The source files package.json "exports" publishes (their exports are the public API). */
export function publicEntryPoints(root: string): Set<string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  return new Set(
    Object.values(pkg.exports)
      .map((target) => (typeof target === 'string' ? target : target.default))
      .filter((target) => target.startsWith('./dist/') && target.endsWith('.js'))
      .map((target) => resolve(root, target.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'))),
  );
}

/** The exports used only in their own file, over the program of `tsconfig`, among the files `include` keeps. */
export function ownFileExportsOf(tsconfig: string, include: (file: string) => boolean): OwnFileExport[] {
  const api = new API({ cwd: dirname(tsconfig) });
  try {
    const project = api.updateSnapshot({ openProject: tsconfig }).getProjects()[0];
    if (!project) throw new Error(`${tsconfig} opened no project`);
    const files = project.program
      .getSourceFileNames()
      .filter(
        (f) => !f.includes('/node_modules/') && /\.m?ts$/.test(f) && !f.endsWith('.d.ts') && include(f),
      );
    return ownFileExports(project.program, project.checker, files);
  } finally {
    api.close();
  }
}

function main(argv: string[]) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const entries = publicEntryPoints(root);
  const own = ownFileExportsOf(
    join(root, 'tsconfig.json'),
    (f) => f.startsWith(`${root}/`) && !entries.has(f) && !/\.test\.ts$/.test(f),
  );
  if (!argv.includes('--count'))
    for (const e of own) process.stdout.write(`${relative(root, e.file)}:${e.line} ${e.name}\n`);
  process.stdout.write(`${own.length} export(s) used only in their own file\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
