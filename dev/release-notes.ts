// `node dev/release-notes.ts [TAG]`: the release notes of the version in package.json (the one place the
// version is kept), read from CHANGELOG.md's section `## [VERSION]`, on stdout. The release workflow runs it
// with the pushed tag. Exits 1 with one line when the tag is not `v` + that version, when the Python
// package's version (python/pyproject.toml) differs from it, or when CHANGELOG.md has no such section or
// an empty one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The body of CHANGELOG.md's `## [version]` section (up to the next `## ` heading), trimmed; or undefined. */
export function changelogSection(changelog: string, version: string): string | undefined {
  const lines = changelog.split('\n');
  const start = lines.findIndex((line) =>
    new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\]`).test(line),
  );
  if (start < 0) return undefined;
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .trim();
}

/** The versions the release reads: package.json's and python/pyproject.toml's. */
export function releaseVersions(root: string): { npm: string; python: string | undefined } {
  const npm = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const pyproject = readFileSync(join(root, 'python/pyproject.toml'), 'utf8');
  const python = /^version\s*=\s*"([^"]+)"/m.exec(pyproject)?.[1];
  return { npm, python };
}

/** The release notes for `tag` (optional), or the one-line problem that stops the release. */
export function releaseNotes(
  root: string,
  tag?: string,
):
  | { problem: string; version?: undefined; notes?: undefined }
  | { problem?: undefined; version: string; notes: string } {
  const { npm, python } = releaseVersions(root);
  if (python !== npm)
    return { problem: `python/pyproject.toml has version ${python}, package.json ${npm}: make them equal` };
  if (tag !== undefined && tag !== `v${npm}`)
    return { problem: `the tag ${tag} is not v${npm} (package.json's version)` };
  const notes = changelogSection(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'), npm);
  if (!notes) return { problem: `CHANGELOG.md has no notes under "## [${npm}]"` };
  return { version: npm, notes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = releaseNotes(fileURLToPath(new URL('..', import.meta.url)), process.argv[2]);
  if (result.problem) {
    process.stderr.write(`release-notes: ${result.problem}\n`);
    process.exit(1);
  }
  process.stdout.write(`${result.notes}\n`);
}
