/**
 * `npm run test:times`: `npm test`'s stages (all, or those named: `npm run test:times -- vitest`) run as
 * `npm test` runs them, then what each took: every stage's wall and CPU time, and every vitest file's (from
 * its start to its end, hooks included: dev/file-times-reporter.ts), each with the machine's
 * 1-minute load average beside it, sampled every 5 s through the run. A figure taken on a loaded machine compares files within the run; it says
 * nothing of a quiet machine's time (the label says LOADED at a load average of 1 or more).
 *
 *   npm run test:times                   every stage; the 25 slowest vitest files
 *   npm run test:times -- vitest --all   the vitest stage; every file
 *   npm run test:times -- --serial       the stages one after another (npm test -- --serial)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOADED_AT, loadLabel, machineLine, sampleLoad } from './bench-report.ts';
import type { FileSpan } from './file-times-reporter.ts';
import { chosenStages, isScript, npmRunner, runStages, summary } from './run-stages.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLE_EVERY_MS = 5000;
const SHOWN_FILES = 25;

interface Sample {
  at: number;
  load: number;
}

interface FileTime {
  file: string;
  seconds: number;
  status: string;
  loads: number[];
}

/** The load samples taken while [from, to] ran, with the one just before it (a short file may fall between two). */
export function loadsDuring(samples: readonly Sample[], from: number, to: number): number[] {
  const before = samples.filter((s) => s.at <= from).at(-1);
  const inside = samples.filter((s) => s.at > from && s.at <= to);
  return [...(before ? [before] : []), ...inside].map((s) => s.load);
}

/**
 * Each vitest file's time from the file-times reporter (dev/file-times-reporter.ts: from its start to its
 * end, hooks included), slowest first, with the load while it ran.
 */
export function fileTimes(report: string, samples: readonly Sample[]): FileTime[] {
  const spans = JSON.parse(report) as FileSpan[];
  return spans
    .map((r) => ({
      file: relative(ROOT, r.file),
      seconds: (r.endTime - r.startTime) / 1000,
      status: r.state,
      loads: loadsDuring(samples, r.startTime, r.endTime),
    }))
    .sort((a, b) => b.seconds - a.seconds);
}

const range = (loads: readonly number[]) =>
  loads.length === 0 ? 'load ?' : `load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`;

export function fileTable(files: readonly FileTime[], shown: number): string {
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  const width = Math.max(...files.slice(0, shown).map((f) => f.file.length), 4);
  return [
    `Vitest files (${files.length}; each from its start to its end, hooks included, ${total.toFixed(0)} s in all, files in parallel):`,
    ...files
      .slice(0, shown)
      .map(
        (f) =>
          `  ${f.file.padEnd(width)}  ${f.seconds.toFixed(1).padStart(6)} s  ${range(f.loads)}${f.status === 'passed' ? '' : `  ${f.status.toUpperCase()}`}`,
      ),
    ...(files.length > shown ? [`  … ${files.length - shown} more (--all shows every file)`] : []),
  ].join('\n');
}

if (isScript(import.meta.url)) {
  const args = process.argv.slice(2);
  const chosen = chosenStages(args.filter((a) => a !== '--all'));
  if (typeof chosen === 'string') {
    process.stderr.write(`test:times: ${chosen}\n`);
    process.exit(2);
  }
  const work = mkdtempSync(join(tmpdir(), 'agent-gateway-test-times-'));
  const report = join(work, 'file-times.json');
  process.env.AGENT_GATEWAY_FILE_TIMES = report;
  const samples: Sample[] = [{ at: Date.now(), load: sampleLoad() }];
  const sampler = setInterval(() => samples.push({ at: Date.now(), load: sampleLoad() }), SAMPLE_EVERY_MS);
  // The vitest stage with the file-times reporter beside its usual output; every other stage as npm test runs it.
  const runner = npmRunner((stage) =>
    stage.name === 'vitest' ? ['--reporter=default', '--reporter=./dev/file-times-reporter.ts'] : [],
  );
  const started = performance.now();
  const results = await runStages(chosen.stages, runner, undefined, { serial: chosen.serial });
  const wall = (performance.now() - started) / 1000;
  clearInterval(sampler);
  samples.push({ at: Date.now(), load: sampleLoad() });
  const loads = samples.map((s) => s.load);
  const lines = [
    '',
    `Machine: ${machineLine()}; ${loadLabel({ start: loads[0] as number, rounds: loads.slice(1, -1), end: loads.at(-1) as number })} (1-minute load average, sampled every ${SAMPLE_EVERY_MS / 1000} s)`,
    ...(Math.max(...loads) >= LOADED_AT
      ? ['LOADED run: the times compare stages and files within this run; a quiet machine is faster.']
      : []),
    summary(results, wall),
  ];
  if (existsSync(report))
    lines.push(
      '',
      fileTable(
        fileTimes(readFileSync(report, 'utf8'), samples),
        args.includes('--all') ? Number.POSITIVE_INFINITY : SHOWN_FILES,
      ),
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  rmSync(work, { recursive: true, force: true });
  process.exit(results.every((r) => r.passed) ? 0 : 1);
}
