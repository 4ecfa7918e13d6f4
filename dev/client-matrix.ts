/**
 * `npm run client-matrix`: runs the client catalogue (test/clients/) against the reference gateway and
 * prints each program's verdict and the confusion matrix: bad programs caught (exactly their rules), good
 * programs passed (no rule at all). Options: `--only <name,...>`, `--parallel <n>` (default 6), `--json`,
 * `--runs <n>` (each program n times, interleaved: how often a verdict is wrong under load), `--save <dir>`
 * (the journal and violations of each wrong run, as JSON in dir, to replay the readings on), `--path <http|proxy|
 * proxy-learned|msw>` (how the agents reach the gateway: over HTTP, default, or through `agent-gateway proxy` with
 * the agents' keys declared, or learned from the tokens they mint through it, or in process through msw, where
 * the programs msw cannot intercept are left out, each named).
 * Exit 0 when every program got its verdict, 1 otherwise.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { parseArgs } from 'node:util';
import { setupServer } from 'msw/node';
import { formatClientReport } from '../mock-server/client-report/report.ts';
import type { Gateway } from '../mock-server/gateway.ts';
import {
  CLIENT_CATALOGUE,
  type ClientProgram,
  confusionMatrix,
  type ProgramOutcome,
  runClientProgramWithGateway,
} from '../test/clients/catalogue.ts';
import { runProgramThroughProxyWithGateway } from '../test/clients/proxy-run.ts';
import { NOT_IN_PROCESS, runCatalogueInProcessWithGateways } from '../test/support/in-process-catalogue.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    parallel: { type: 'string', default: '6' },
    json: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    save: { type: 'string' },
    path: { type: 'string', default: 'http' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    'npm run client-matrix -- [--only name,name] [--parallel 6] [--json] [--runs 1] [--save DIR] [--path http|proxy|proxy-learned|msw]\n' +
      `Programs: ${CLIENT_CATALOGUE.map((p) => p.name).join(', ')}\n`,
  );
  process.exit(0);
}
const wanted = values.only?.split(',').map((name) => name.trim());
const unknown = wanted?.filter((name) => !CLIENT_CATALOGUE.some((p) => p.name === name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`Unknown program(s): ${unknown.join(', ')}. See --help.\n`);
  process.exit(2);
}
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) {
  process.stderr.write('--parallel must be an integer from 1 to 64.\n');
  process.exit(2);
}

const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 500) {
  process.stderr.write('--runs must be an integer from 1 to 500.\n');
  process.exit(2);
}
const PATHS = ['http', 'proxy', 'proxy-learned', 'msw'] as const;
const path = PATHS.find((p) => p === values.path);
if (!path) {
  process.stderr.write(`--path must be one of ${PATHS.join(', ')}.\n`);
  process.exit(2);
}
if (values.save) mkdirSync(values.save, { recursive: true });

/**
 * Rules a bad program breaks that its report PASSED (neither flagged nor NOT OBSERVED), a timing rule waived
 * for a run load disturbed included: an escape, whatever the run's grading forgave.
 */
const passedButBroken = (o: ProgramOutcome) =>
  o.program.verdict === 'bad' && !o.error
    ? o.program.rules.filter((rule) => !o.flagged.includes(rule) && !o.unobserved.includes(rule))
    : [];

const wrong = (o: ProgramOutcome) =>
  Boolean(o.error) ||
  passedButBroken(o).length > 0 ||
  o.falseFlags.length > 0 ||
  o.missed.length > 0 ||
  (o.program.verdict === 'good' && o.flagged.length > 0);

/** A wrong verdict's journal and violations, saved when asked. */
function saveIfWrong(outcome: ProgramOutcome, gateway: Gateway, k: number): void {
  const program = outcome.program;
  if (values.save && wrong(outcome))
    writeFileSync(
      `${values.save}/${program.name}-${Date.now()}-${k}.json`,
      JSON.stringify(
        {
          program: program.name,
          flagged: outcome.flagged,
          violations: outcome.report.violations,
          report: formatClientReport(outcome.report),
          // The whole journal: requests no stage named are tied to the agent by the report, not the journal.
          entries: gateway.journal.list(),
        },
        null,
        1,
      ),
    );
}

/** One run over HTTP or through the proxy. */
async function runOnce(program: ClientProgram, k: number): Promise<ProgramOutcome> {
  const { outcome, gateway } =
    path === 'http'
      ? await runClientProgramWithGateway(program)
      : await runProgramThroughProxyWithGateway(program, path === 'proxy' ? 'declared' : 'learned');
  saveIfWrong(outcome, gateway, k);
  return outcome;
}

/** Every program in process, on one msw server (each on a host of its own), `parallel` at once. */
async function runInProcess(programs: readonly ClientProgram[]): Promise<ProgramOutcome[]> {
  const server = setupServer();
  server.listen({ onUnhandledFrame: 'error' });
  try {
    const ran = await runCatalogueInProcessWithGateways(programs, server, parallel);
    ran.forEach(({ outcome, gateway }, k) => {
      saveIfWrong(outcome, gateway, k);
    });
    return ran.map((r) => r.outcome);
  } finally {
    server.close();
    // node:http's ESM exports back to the real functions.
    syncBuiltinESMExports();
  }
}

const runnable = path === 'msw' ? CLIENT_CATALOGUE.filter((p) => !NOT_IN_PROCESS[p.name]) : CLIENT_CATALOGUE;
if (path === 'msw')
  for (const p of CLIENT_CATALOGUE.filter(
    (p) => NOT_IN_PROCESS[p.name] && (!wanted || wanted.includes(p.name)),
  ))
    process.stderr.write(`Left out in process: ${p.name} (${NOT_IN_PROCESS[p.name]}).\n`);
const chosen = wanted ? runnable.filter((p) => wanted.includes(p.name)) : runnable;
// Every program `runs` times, interleaved so that each meets the same load; `parallel` at once.
const programs = Array.from({ length: runs }, () => chosen).flat();
const started = performance.now();
let outcomes: ProgramOutcome[] = new Array(programs.length);
if (path === 'msw') outcomes = await runInProcess(programs);
else {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, programs.length) }, async () => {
      for (let k = next++; k < programs.length; k = next++)
        outcomes[k] = await runOnce(programs[k] as ClientProgram, k);
    }),
  );
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const matrix = confusionMatrix(outcomes);

/** The figures that tell whether verdicts held: good flagged, bad escaped (named), NOT OBSERVED (named). */
function verdictFigures(outcomes: readonly ProgramOutcome[]): string {
  const names = (list: readonly string[]) => [...new Set(list)].join('; ') || 'none';
  const goodFlagged = outcomes.filter((o) => o.program.verdict === 'good' && o.flagged.length > 0);
  const escaped = outcomes.filter((o) => passedButBroken(o).length > 0);
  const unobserved = (verdict: 'good' | 'bad') =>
    outcomes.filter((o) => o.program.verdict === verdict && o.unobserved.length > 0).length;
  return [
    `Good flagged: ${goodFlagged.length} (${names(goodFlagged.map((o) => `${o.program.name}: ${o.flagged.join(', ')}`))})`,
    `bad escaped (a rule it breaks PASSED): ${escaped.length} (${names(escaped.map((o) => `${o.program.name}: ${passedButBroken(o).join(', ')}`))})`,
    `NOT OBSERVED: ${unobserved('good')} good, ${unobserved('bad')} bad runs (${names(outcomes.flatMap((o) => o.unobserved.map((rule) => `${o.program.name}: ${rule}`)))}).`,
  ].join('; ');
}

const verdictOf = (o: ProgramOutcome) =>
  o.error
    ? `ERROR ${o.error}`
    : o.falseFlags.length > 0
      ? `FALSE FLAG ${o.falseFlags.join(', ')}`
      : o.missed.length > 0
        ? `MISSED ${o.missed.join(', ')}`
        : o.program.verdict === 'bad'
          ? `caught ${o.flagged.join(', ')}${o.unobserved.length > 0 ? `; NOT OBSERVED ${o.unobserved.join(', ')}` : ''}${passedButBroken(o).length > 0 ? `; PASSED ${passedButBroken(o).join(', ')}` : ''}`
          : o.unobserved.length > 0
            ? `NOT OBSERVED ${o.unobserved.join(', ')}`
            : 'passed';

if (values.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        seconds: Number(seconds),
        matrix,
        programs: outcomes.map((o) => ({
          name: o.program.name,
          verdict: o.program.verdict,
          expected: o.program.rules,
          flagged: o.flagged,
          missed: o.missed,
          false_flags: o.falseFlags,
          not_observed: o.unobserved,
          passed_but_broken: passedButBroken(o),
          timing_disturbed: o.timingDisturbed,
          error: o.error,
          ms: o.ms,
        })),
      },
      null,
      2,
    )}\n`,
  );
} else {
  const width = Math.max(...outcomes.map((o) => o.program.name.length));
  for (const o of outcomes) {
    process.stdout.write(
      `${o.program.verdict.toUpperCase().padEnd(4)}  ${o.program.name.padEnd(width)}  ${verdictOf(o)}${o.timingDisturbed ? `  (timing not judged: ${o.timingDisturbed})` : ''}\n`,
    );
  }
  const pct = (n: number, of: number) => (of === 0 ? '-' : `${Math.round((100 * n) / of)}%`);
  process.stdout.write(
    [
      '',
      '                 flagged   not flagged',
      `bad  (${String(matrix.bad).padStart(2)})        ${String(matrix.badCaught).padStart(3)}       ${String(matrix.bad - matrix.badCaught).padStart(3)}`,
      `good (${String(matrix.good).padStart(2)})        ${String(matrix.good - matrix.goodPassed).padStart(3)}       ${String(matrix.goodPassed).padStart(3)}`,
      '',
      verdictFigures(outcomes),
      `Bad caught (exactly their rules): ${matrix.badCaught}/${matrix.bad} (${pct(matrix.badCaught, matrix.bad)}); good passed: ${matrix.goodPassed}/${matrix.good} (${pct(matrix.goodPassed, matrix.good)}); false flags: ${matrix.falseFlags}; timing disturbed by load: ${matrix.disturbed}; a rule NOT OBSERVED (neither a pass nor a catch; counted above as not escaped or not flagged): ${outcomes.filter((o) => o.unobserved.length > 0).length}. ${programs.length} programs in ${seconds} s.`,
      '',
    ].join('\n'),
  );
}
process.exitCode = matrix.badCaught === matrix.bad && matrix.goodPassed === matrix.good ? 0 : 1;
