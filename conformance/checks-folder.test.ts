import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKS } from './checks/index.ts';

/*
 * checks/ holds the checks and nothing else: each source file there is one check the suite runs, at the
 * path of its id (auth.invalid-token is checks/auth/invalid-token.ts), with the parts only it uses.
 * index.ts lists them in the order they run. What checks share (what a check is, the ways to run its
 * cases, the burst and Retry-After observations) lives in check-kit/.
 */
const checksDir = join(import.meta.dirname, 'checks');
const checkFiles = readdirSync(checksDir, { recursive: true, encoding: 'utf8' })
  .map((name) => name.replaceAll('\\', '/'))
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'index.ts');

describe('checks/ holds checks only', () => {
  it('every check the suite runs has its own file at the path of its id', () => {
    expect(checkFiles.map((f) => f.replace(/\.ts$/, '').replace('/', '.')).sort()).toEqual(
      CHECKS.map((c) => c.id).sort(),
    );
  });

  for (const file of checkFiles) {
    it(`${file} is one check and leans on no other file in checks/`, async () => {
      const exported = Object.values(await import(join(checksDir, file)));
      const checks = exported.filter((value) => CHECKS.includes(value as (typeof CHECKS)[number]));
      expect(checks, `${file} exports one check`).toHaveLength(1);
      const inChecks = [...readFileSync(join(checksDir, file), 'utf8').matchAll(/from '(\.\.?\/[^']+)'/g)]
        .map((m) => join(checksDir, file, '..', m[1] as string))
        .filter((target) => target.startsWith(`${checksDir}/`));
      expect(inChecks, `${file} imports from checks/: a part checks share belongs in check-kit/`).toEqual([]);
    });
  }
});
