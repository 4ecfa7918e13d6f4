/**
 * `npm run explore`: the property tests on fresh random seeds, for longer than `npm test` runs them, to find
 * the counterexamples the fixed seed does not meet. Each failure is printed as ONE line to add to
 * test/property-corpus.jsonl, from then on replayed by `npm test` (test/support/property.ts).
 *
 * Usage: npm run explore -- [--rounds 1] [--seconds 20] [--runs-factor 10] [file ...]
 * (files: property test files, default every test file that declares properties through test.prop)
 * Bounded: each property stops after `--runs-factor` times its declared runs or `--seconds`, whichever
 * comes first; `--rounds` repeats the whole on new seeds. Loopback only (the properties' own servers).
 * Exit 1 when a property failed (its corpus lines printed), 2 on bad arguments.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CORPUS_FILE } from '../test/support/property.ts';

const USAGE = `Usage: npm run explore -- [--rounds 1] [--seconds 20] [--runs-factor 10] [file ...]
  --rounds N        times the whole is run, each on new seeds (1-100)
  --seconds N       time limit of each property in a round (1-3600)
  --runs-factor N   each property runs N times its declared runs, within the time limit (1-1000)
  file ...          property test files (default: every test file declaring properties)
A failure prints one line for ${CORPUS_FILE}; exit 1 when a property failed.
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}`);
  process.exit(2);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        rounds: { type: 'string', default: '1' },
        seconds: { type: 'string', default: '20' },
        'runs-factor': { type: 'string', default: '10' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
})();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const bounded = (name: string, text: string, max: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${name} must be an integer from 1 to ${max}`);
  return n;
};
const rounds = bounded('rounds', values.rounds, 100);
const seconds = bounded('seconds', values.seconds, 3600);
const runsFactor = bounded('runs-factor', values['runs-factor'], 1000);

/** The test files that declare properties through test/support/property.ts. */
function propertyFiles(): string[] {
  return ['vocabulary', 'mock-server', 'conformance', 'cli', 'dev', 'test']
    .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)))
    .filter((f) => f.endsWith('.test.ts') && !f.includes('node_modules'))
    .filter((f) => /test\.prop\(/.test(readFileSync(f, 'utf8')))
    .sort();
}
const files = positionals.length > 0 ? positionals : propertyFiles();

const work = mkdtempSync(join(tmpdir(), 'explore-'));
const out = join(work, 'corpus-lines.jsonl');
const lines: string[] = [];
let otherFailures = 0;
try {
  for (let round = 1; round <= rounds; round++) {
    process.stdout.write(
      `explore round ${round}/${rounds}: ${files.length} files, ${seconds} s a property\n`,
    );
    // Only the properties (their names end with the seed they ran on); shrinking gets time of its own.
    const run = spawnSync(
      process.execPath,
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        ...files,
        '-t',
        '\\(with seed=',
        `--testTimeout=${(seconds + 120) * 1000}`,
        '--reporter=dot',
      ],
      {
        stdio: 'inherit',
        env: {
          ...process.env,
          PROPERTY_EXPLORE: '1',
          PROPERTY_EXPLORE_OUT: out,
          PROPERTY_TIME_LIMIT_MS: String(seconds * 1000),
          PROPERTY_RUNS_FACTOR: String(runsFactor),
        },
      },
    );
    if (run.error) fail(`could not run vitest: ${run.error.message}`);
    if (run.status !== 0) otherFailures++;
  }
  try {
    lines.push(...readFileSync(out, 'utf8').split('\n').filter(Boolean));
  } catch {
    // No failure wrote a line.
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (lines.length === 0) {
  // A round can fail without a counterexample (a timeout, a test file that does not load): not a pass.
  if (otherFailures > 0) {
    process.stdout.write(`explore: no counterexample, but ${otherFailures} round(s) failed (see above)\n`);
    process.exit(1);
  }
  process.stdout.write('explore: no counterexample found\n');
  process.exit(0);
}
process.stdout.write(
  `explore: ${lines.length} counterexample(s); fix the cause, then add each line to ${CORPUS_FILE}:\n${lines.join('\n')}\n`,
);
process.exit(1);
