/**
 * `npm test`: every stage of the project's tests, each reported. A stage that fails does not hide the ones
 * after it (no `&&` chain): all run, each ends with a line saying passed or FAILED with its wall time, its
 * CPU time (user + system, of its whole process tree) and the 1-minute load average at its start and end,
 * and the exit code is 1 at the end if any failed.
 *
 * The stages run in two lanes side by side: the checks and vitest in one, the packaged stages (consumers,
 * then python) in the other. Most of vitest's time is spent waiting on sockets and timers, so the package
 * lane's work fills the idle CPU rather than adding its minutes to the run. The first lane's output goes
 * straight to the terminal; the other lane's is held and printed whole when each of its stages ends, so no
 * two stages' lines interleave.
 *
 *   npm test                                  all stages
 *   npm test -- vitest consumers              only those (by name; one lane's stages in the order given)
 *   npm test -- --serial                      one stage after another, every output straight through
 *
 * Each stage is an npm script of package.json, so what a stage runs is declared once, there, and can be run
 * alone (`npm run test:vitest`). With AGENT_GATEWAY_STAGE_TIMES=FILE the results are also written to FILE
 * as JSON (`npm run test:times` reads it).
 */
import { spawn } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';

/**
 * Which stages may run beside which. In a lane the stages run one after another; the lanes run side by
 * side. `package`: both of its stages build the Python package's gateway (python/agent_gateway_harness/
 * _gateway: `npm pack` runs the build, `test:python` rebuilds it and makes its wheel from it), so they must
 * not overlap each other; neither touches what the `checks` lane reads (vitest bundles its own CLI into
 * node_modules/.cache; tsc and biome leave dist/ and the Python package alone).
 */
type Lane = 'checks' | 'package';

export interface Stage {
  name: string;
  /** The npm script the stage runs. */
  script: string;
  lane: Lane;
}

/** The stages of `npm test`, in order: the quick checks first, so their verdicts come early. */
export const STAGES: readonly Stage[] = [
  { name: 'typecheck', script: 'typecheck', lane: 'checks' },
  { name: 'lint', script: 'lint', lane: 'checks' },
  { name: 'vitest', script: 'test:vitest', lane: 'checks' },
  { name: 'consumers', script: 'test:consumers', lane: 'package' },
  { name: 'python', script: 'test:python', lane: 'package' },
];

interface StageResult {
  name: string;
  script: string;
  lane: Lane;
  /** The exit code, or the signal's name when a signal ended the stage. */
  exit: number | string;
  passed: boolean;
  seconds: number;
  /** CPU seconds (user + system) of the stage's whole process tree, when the platform tells them. */
  cpuSeconds?: number;
  loadAtStart: number;
  loadAtEnd: number;
}

/** What running a stage gave: its exit code (or the signal that ended it) and its CPU seconds if known. */
export interface RunOutcome {
  exit: number | string;
  cpuSeconds?: number;
}

/**
 * Runs one stage. `output` is where its output goes: `undefined` for the terminal, or a function that
 * receives it (a stage running beside another, whose output is held until it ends).
 */
type Runner = (stage: Stage, output?: (chunk: string) => void) => Promise<RunOutcome>;

/**
 * The CPU time of a POSIX shell's children, from the second line of its `times` builtin
 * (`0m1.230000s 0m0.450000s`: user, then system); undefined if the text is not that.
 */
export function childrenCpuSeconds(times: string): number | undefined {
  const line = times.trim().split('\n')[1] ?? '';
  const m = /^(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s$/.exec(line.trim());
  if (!m) return undefined;
  const [, um, us, sm, ss] = m.map(Number) as number[];
  return (um as number) * 60 + (us as number) + (sm as number) * 60 + (ss as number);
}

/**
 * The variable through which the stages learn the machine's 1-minute load average as it was before `npm
 * test` started them (vitest sizes its pool by it: dev/test-schedule.ts). Measured once the stages run, the
 * load would count the run's own lanes (typecheck, the consumer matrix beside vitest) as the machine's
 * other work, and a quiet machine would always look busy.
 */
export const MACHINE_LOAD_ENV = 'AGENT_GATEWAY_MACHINE_LOAD';

/** The stages' environment: this one, with the machine's load now (unless the caller already gave one). */
export const stageEnv = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({
  ...env,
  [MACHINE_LOAD_ENV]: env[MACHINE_LOAD_ENV] || (loadavg()[0] ?? 0).toFixed(2),
});

/**
 * Runs each stage's npm script, with the extra arguments given for it (after `--`), in `env` (by default
 * this process's, with the machine's load as it is when the runner is made: `stageEnv`). On POSIX it runs
 * under `sh`, whose `times` builtin then reports the CPU time of everything the stage started (written to a
 * pipe of its own, never mixed with the stage's output); elsewhere npm runs directly and the CPU is unknown.
 */
export const npmRunner =
  (extra: (stage: Stage) => string[] = () => [], env: NodeJS.ProcessEnv = stageEnv()): Runner =>
  (stage, output) =>
    new Promise((resolve) => {
      const more = extra(stage);
      const args = ['run', '--silent', stage.script, ...(more.length > 0 ? ['--', ...more] : [])];
      const posix = process.platform !== 'win32';
      const io = output
        ? (['ignore', 'pipe', 'pipe'] as const)
        : (['inherit', 'inherit', 'inherit'] as const);
      const child = posix
        ? spawn('sh', ['-c', 'npm "$@"; status=$?; times >&3; exit $status', 'sh', ...args], {
            stdio: [...io, 'pipe'],
            env,
          })
        : spawn('npm', args, { stdio: [...io], shell: true, env });
      let times = '';
      child.stdio[3]?.on('data', (chunk: Buffer) => {
        times += chunk.toString();
      });
      if (output) {
        child.stdout?.on('data', (chunk: Buffer) => output(chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => output(chunk.toString()));
      }
      child.once('error', (error) => {
        output?.(`stage ${stage.name}: could not start npm run ${stage.script}: ${error.message}\n`);
        if (!output)
          process.stderr.write(
            `stage ${stage.name}: could not start npm run ${stage.script}: ${error.message}\n`,
          );
        resolve({ exit: 127 });
      });
      child.once('close', (code, signal) => {
        const cpuSeconds = childrenCpuSeconds(times);
        resolve({ exit: signal ?? code ?? 1, ...(cpuSeconds !== undefined && { cpuSeconds }) });
      });
    });

/** Whether the module of `url` is the script node was started with (not a module a test imports). */
export const isScript = (url: string) =>
  process.argv[1] !== undefined && url === pathToFileURL(realpathSync(process.argv[1])).href;

const oneMinuteLoad = () => loadavg()[0] ?? 0;

/** The stages grouped by lane, each lane's stages in the order given, the lanes in order of first stage. */
export function lanesOf(stages: readonly Stage[]): Stage[][] {
  const lanes = new Map<Lane, Stage[]>();
  for (const stage of stages) lanes.set(stage.lane, [...(lanes.get(stage.lane) ?? []), stage]);
  return [...lanes.values()];
}

/**
 * Runs every stage whatever the others did, printing a line per stage as it ends; the results come in the
 * order of `stages`. The lanes run side by side (one after another with `serial`): the first lane's output
 * goes to the terminal as it comes, each other stage's is printed whole when that stage ends.
 */
export async function runStages(
  stages: readonly Stage[],
  runner: Runner = npmRunner(),
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  options: { serial?: boolean } = {},
): Promise<StageResult[]> {
  const lanes = options.serial ? [[...stages]] : lanesOf(stages);
  const beside = (lane: Stage[]) =>
    lanes
      .filter((other) => other !== lane)
      .flat()
      .map((s) => s.name)
      .join(', ');
  const results = new Map<string, StageResult>();
  const runLane = async (lane: Stage[], foreground: boolean) => {
    for (const stage of lane) {
      const loadAtStart = oneMinuteLoad();
      const started = performance.now();
      let held = '';
      if (foreground) write(`\n== stage ${stage.name} (npm run ${stage.script}) ==`);
      else
        write(
          `\n== stage ${stage.name} (npm run ${stage.script}) started beside ${beside(lane)}: its output follows when it ends ==`,
        );
      const outcome = await runner(
        stage,
        foreground
          ? undefined
          : (chunk) => {
              held += chunk;
            },
      );
      const result: StageResult = {
        ...stage,
        exit: outcome.exit,
        passed: outcome.exit === 0,
        seconds: (performance.now() - started) / 1000,
        ...(outcome.cpuSeconds !== undefined && { cpuSeconds: outcome.cpuSeconds }),
        loadAtStart,
        loadAtEnd: oneMinuteLoad(),
      };
      results.set(stage.name, result);
      if (!foreground)
        write(`\n== stage ${stage.name} (npm run ${stage.script}): its output ==\n${held.trimEnd()}`);
      write(`== stage ${stage.name}: ${resultLine(result)} ==`);
    }
  };
  await Promise.all(lanes.map((lane, k) => runLane(lane, k === 0)));
  return stages.map((s) => results.get(s.name) as StageResult);
}

const resultLine = (r: StageResult) =>
  `${r.passed ? 'passed' : `FAILED (exit ${r.exit})`} in ${r.seconds.toFixed(1)} s, ${r.cpuSeconds === undefined ? 'CPU ?' : `CPU ${r.cpuSeconds.toFixed(1)} s`}, load ${r.loadAtStart.toFixed(2)} -> ${r.loadAtEnd.toFixed(2)}`;

/**
 * The summary table printed at the end: every stage's verdict and times, then the run's wall time (`wall`:
 * from the first stage's start to the last one's end; the lanes overlap, so it is less than the stages'
 * sum) and its CPU time.
 */
export function summary(results: readonly StageResult[], wallSeconds?: number): string {
  const width = Math.max(...results.map((r) => r.name.length), 5);
  const sum = results.reduce((total, r) => total + r.seconds, 0);
  const cpu = results.every((r) => r.cpuSeconds !== undefined)
    ? `, CPU ${results.reduce((total, r) => total + (r.cpuSeconds as number), 0).toFixed(1)} s`
    : '';
  const failed = results.filter((r) => !r.passed).map((r) => r.name);
  return [
    '',
    'Stages:',
    ...results.map((r) => `  ${r.name.padEnd(width)}  ${resultLine(r)}`),
    wallSeconds === undefined
      ? `  ${'total'.padEnd(width)}  ${sum.toFixed(1)} s wall${cpu}`
      : `  ${'total'.padEnd(width)}  ${wallSeconds.toFixed(1)} s wall (the stages' times add up to ${sum.toFixed(1)} s: lanes side by side)${cpu}`,
    failed.length === 0 ? 'All stages passed.' : `FAILED: ${failed.join(', ')}`,
  ].join('\n');
}

/** The options `npm test` takes beside stage names. */
const FLAGS = ['--serial'] as const;

/**
 * The stages named on the command line (all of them when none is) and whether to run them one after
 * another, or an error naming the unknown names or options.
 */
export function chosenStages(args: readonly string[]): { stages: Stage[]; serial: boolean } | string {
  const flags = args.filter((a) => a.startsWith('-'));
  const names = args.filter((a) => !a.startsWith('-'));
  const badFlags = flags.filter((f) => !(FLAGS as readonly string[]).includes(f));
  if (badFlags.length > 0)
    return `unknown option ${badFlags.join(', ')}: the options are ${FLAGS.join(', ')}`;
  const serial = flags.includes('--serial');
  if (names.length === 0) return { stages: [...STAGES], serial };
  const unknown = names.filter((name) => !STAGES.some((s) => s.name === name));
  if (unknown.length > 0)
    return `unknown stage ${unknown.join(', ')}: the stages are ${STAGES.map((s) => s.name).join(', ')}`;
  return { stages: names.map((name) => STAGES.find((s) => s.name === name) as Stage), serial };
}

if (isScript(import.meta.url)) {
  const chosen = chosenStages(process.argv.slice(2));
  if (typeof chosen === 'string') {
    process.stderr.write(`npm test: ${chosen}\n`);
    process.exit(2);
  }
  const started = performance.now();
  const results = await runStages(chosen.stages, npmRunner(), undefined, { serial: chosen.serial });
  process.stdout.write(`${summary(results, (performance.now() - started) / 1000)}\n`);
  const timesFile = process.env.AGENT_GATEWAY_STAGE_TIMES;
  if (timesFile) writeFileSync(timesFile, `${JSON.stringify(results, null, 2)}\n`);
  process.exit(results.every((r) => r.passed) ? 0 : 1);
}
