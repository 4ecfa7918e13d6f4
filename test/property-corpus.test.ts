import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPUS_FILE, FIXED_PROPERTY_SEED, propertyMode, readCorpus } from './support/property.ts';

/*
 * The corpus of counterexamples (test/support/property.ts) names properties that exist, and every property
 * test goes through test/support/property.ts, so none runs on a random seed in `npm test`.
 */

const TEST_DIRS = ['vocabulary', 'mock-server', 'conformance', 'cli', 'dev', 'test'];
const testFiles = TEST_DIRS.flatMap((dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f).split('\\').join('/')),
).filter((f) => f.endsWith('.test.ts'));

describe('property tests are deterministic by default', () => {
  it('npm test runs them on the fixed seed unless PROPERTY_SEED says otherwise', () => {
    expect(propertyMode().seed).toBe(
      process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : FIXED_PROPERTY_SEED,
    );
  });

  it('every corpus line names a property of a test file, by the name given to test.prop', () => {
    const lines = readCorpus();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const [file, ...rest] = line.test.split(' > ');
      const name = rest.join(' > ');
      expect(testFiles, line.test).toContain(file);
      expect(readFileSync(file as string, 'utf8'), `${CORPUS_FILE}: ${line.test}`).toContain(`'${name}'`);
    }
  });

  it('a line that is not a corpus line is refused, naming its place', () => {
    expect(() =>
      readCorpus('{"test":"a > b","seed":1,"path":"0","counterexample":"[1]"}\n\n{"seed":1}\n'),
    ).toThrow(`${CORPUS_FILE}:3: a corpus line is`);
    expect(() => readCorpus('not json')).toThrow(`${CORPUS_FILE}:1: not JSON`);
  });

  it('no test file takes test.prop or fc.assert from elsewhere than test/support/property.ts', () => {
    const direct = testFiles.filter((f) =>
      /^import .* from '(@fast-check\/vitest|fast-check)';/m.test(readFileSync(f, 'utf8')),
    );
    // conformance/check-kit/check-contract.test.ts drives the conformance suite's own runner, which takes its seed explicitly.
    expect(direct).toEqual(['conformance/check-kit/check-contract.test.ts']);
  });
});
