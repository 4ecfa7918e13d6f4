/**
 * `npm test`: every stage of the project's tests, one after another, each reported. A stage that fails does
 * not hide the ones after it (no `&&` chain): all run, each line says passed or FAILED with its wall time and
 * the 1-minute load average at its start and end, and the exit code is 1 at the end if any failed.
 *
 *   npm test                                  all stages
 *   npm test -- vitest consumers              only those (by name, in the order given)
 *
 * Each stage is an npm script of package.json, so what a stage runs is declared once, there, and can be run
 * alone (`npm run test:vitest`). With AGENT_GATEWAY_STAGE_TIMES=FILE the results are also written to FILE
 * as JSON (`npm run test:times` reads it).
 */
import { spawn } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';

export interface Stage {
  name: string;
  /** The npm script the stage runs. */
  script: string;
}

/** The stages of `npm test`, in order: the quick checks first, so their verdicts come early. */
export const STAGES: readonly Stage[] = [
  { name: 'typecheck', script: 'typecheck' },
  { name: 'lint', script: 'lint' },
  { name: 'vitest', script: 'test:vitest' },
  { name: 'consumers', script: 'test:consumers' },
  { name: 'python', script: 'test:python' },
];

export interface StageResult {
  name: string;
  script: string;
  /** The exit code, or the signal's name when a signal ended the stage. */
  exit: number | string;
  passed: boolean;
  seconds: number;
  loadAtStart: number;
  loadAtEnd: number;
}

/** Runs one command and resolves with its exit code (or the signal that ended it); its output is the terminal's. */
export type Runner = (stage: Stage) => Promise<number | string>;

/** Runs each stage's npm script, with the extra arguments given for it (after `--`). */
export const npmRunner =
  (extra: (stage: Stage) => string[] = () => []): Runner =>
  (stage) =>
    new Promise((resolve) => {
      const more = extra(stage);
      const args = ['run', '--silent', stage.script, ...(more.length > 0 ? ['--', ...more] : [])];
      const child = spawn('npm', args, { stdio: 'inherit' });
      child.once('error', (error) => {
        process.stderr.write(
          `stage ${stage.name}: could not start npm run ${stage.script}: ${error.message}\n`,
        );
        resolve(127);
      });
      child.once('close', (code, signal) => resolve(signal ?? code ?? 1));
    });

/** Whether the module of `url` is the script node was started with (not a module a test imports). */
export const isScript = (url: string) =>
  process.argv[1] !== undefined && url === pathToFileURL(realpathSync(process.argv[1])).href;

const oneMinuteLoad = () => loadavg()[0] ?? 0;

/** Runs every stage whatever the ones before did, printing a line per stage as it ends. */
export async function runStages(
  stages: readonly Stage[],
  runner: Runner = npmRunner(),
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<StageResult[]> {
  const results: StageResult[] = [];
  for (const stage of stages) {
    write(`\n== stage ${stage.name} (npm run ${stage.script}) ==`);
    const loadAtStart = oneMinuteLoad();
    const started = performance.now();
    const exit = await runner(stage);
    const result: StageResult = {
      ...stage,
      exit,
      passed: exit === 0,
      seconds: (performance.now() - started) / 1000,
      loadAtStart,
      loadAtEnd: oneMinuteLoad(),
    };
    results.push(result);
    write(`== stage ${stage.name}: ${resultLine(result)} ==`);
  }
  return results;
}

const resultLine = (r: StageResult) =>
  `${r.passed ? 'passed' : `FAILED (exit ${r.exit})`} in ${r.seconds.toFixed(1)} s, load ${r.loadAtStart.toFixed(2)} -> ${r.loadAtEnd.toFixed(2)}`;

/** The summary table printed at the end: every stage's verdict and time, then the total. */
export function summary(results: readonly StageResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length), 5);
  const total = results.reduce((sum, r) => sum + r.seconds, 0);
  const failed = results.filter((r) => !r.passed).map((r) => r.name);
  return [
    '',
    'Stages:',
    ...results.map((r) => `  ${r.name.padEnd(width)}  ${resultLine(r)}`),
    `  ${'total'.padEnd(width)}  ${total.toFixed(1)} s wall`,
    failed.length === 0 ? 'All stages passed.' : `FAILED: ${failed.join(', ')}`,
  ].join('\n');
}

/** The stages named on the command line (all of them when none is), or an error naming the unknown ones. */
export function chosenStages(names: readonly string[]): Stage[] | string {
  if (names.length === 0) return [...STAGES];
  const unknown = names.filter((name) => !STAGES.some((s) => s.name === name));
  if (unknown.length > 0)
    return `unknown stage ${unknown.join(', ')}: the stages are ${STAGES.map((s) => s.name).join(', ')}`;
  return names.map((name) => STAGES.find((s) => s.name === name) as Stage);
}

if (isScript(import.meta.url)) {
  const chosen = chosenStages(process.argv.slice(2));
  if (typeof chosen === 'string') {
    process.stderr.write(`npm test: ${chosen}\n`);
    process.exit(2);
  }
  const results = await runStages(chosen);
  process.stdout.write(`${summary(results)}\n`);
  const timesFile = process.env.AGENT_GATEWAY_STAGE_TIMES;
  if (timesFile) writeFileSync(timesFile, `${JSON.stringify(results, null, 2)}\n`);
  process.exit(results.every((r) => r.passed) ? 0 : 1);
}
