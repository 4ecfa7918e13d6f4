/**
 * `npx tsx dev/backoff-reading.ts`: how often the backoff-with-jitter readings of capped schedules (the low
 * ceiling and the flat schedule, mock-server/client-report/rule-readings/schedule-growth.ts) give the wrong verdict
 * over HTTP on a loaded machine (issue 33). Runs the client catalogue's backoff programs, jittered and not,
 * capped and not, each `--runs` times, `--parallel` at once (the runs load the machine as CI does), against
 * the reference gateway on loopback, and prints per program: runs, right verdicts, wrong ones (a missed
 * backoff-with-jitter on a bad program, a flag on a good one), and runs whose waits load disturbed (the
 * catalogue's own `timingHeld`: the rule is not required then, and a flag is not counted as false).
 *
 * Usage: npx tsx dev/backoff-reading.ts [--runs 10] [--parallel 4] [--only a,b] [--json] [--save DIR]
 * (--save: each wrong run's journal and violations, as JSON in DIR, to replay the rule on)
 * Exit 1 when a verdict was wrong, 0 otherwise. Bounded: runs x programs, each a few seconds.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { waitsBy } from '../test/clients/call.ts';
import {
  CLIENT_CATALOGUE,
  type ClientProgram,
  type ProgramOutcome,
  runClientProgramWithGateway,
} from '../test/clients/catalogue.ts';

/** The catalogue's capped schedules and their neighbours, jittered and not, good and bad. */
const BACKOFF_PROGRAMS = [
  'full-jitter-capped-100ms',
  'full-jitter-capped-1s',
  'urllib3-backoff-max-held',
  'capped-backoff-with-jitter',
  'exponential-one-ms-jitter',
  'exponential-twenty-percent-jitter',
  'cache-busted-capped',
];

const OPTIONS = {
  runs: { type: 'string', default: '10' },
  parallel: { type: 'string', default: '4' },
  only: { type: 'string' },
  json: { type: 'boolean', default: false },
  save: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
const USAGE = `Usage: npx tsx dev/backoff-reading.ts [--runs 10] [--parallel 4] [--only a,b] [--json] [--save DIR]
  --runs N       runs per program (1-200)        --parallel N   runs at once (1-16)
  --only a,b     these catalogue programs (default: the capped schedules and their neighbours)
  --json         the figures as JSON              --save DIR     each wrong run's journal and violations
Exit 1 when a verdict was wrong, 0 otherwise; loopback only.
`;
const parsed = (() => {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
})();
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const runs = Number(values.runs);
const parallel = Number(values.parallel);
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  runs > 200 ||
  !Number.isInteger(parallel) ||
  parallel < 1 ||
  parallel > 16
) {
  process.stderr.write('--runs must be 1-200 and --parallel 1-16\n');
  process.exit(2);
}
const names = values.only?.split(',').map((n) => n.trim()) ?? BACKOFF_PROGRAMS;
const programs = names.map((name) => {
  const program = CLIENT_CATALOGUE.find((p) => p.name === name);
  if (!program) {
    process.stderr.write(`unknown program ${name}\n`);
    process.exit(2);
  }
  return program;
});

const RULE = 'backoff-with-jitter';
/** Wrong for this rule: missed on a program that breaks it (not waived), or flagged on one that keeps it. */
const wrong = (o: ProgramOutcome) => o.missed.includes(RULE) || o.falseFlags.includes(RULE);

/** One run over HTTP, graded as the catalogue test grades it; a wrong verdict keeps the waits it read. */
async function runOnce(program: ClientProgram): Promise<ProgramOutcome & { waits?: number[][] }> {
  const { outcome, gateway } = await runClientProgramWithGateway(program);
  if (!wrong(outcome)) return outcome;
  const entries = gateway.journal.list({ agent: program.agent });
  if (values.save)
    writeFileSync(
      `${values.save}/${program.name}-${Date.now()}.json`,
      JSON.stringify({ entries, violations: outcome.report.violations }, null, 1),
    );
  return { ...outcome, waits: waitsBy(entries, (e) => e.query ?? e.operation) };
}

const started = performance.now();
// Every program `runs` times, interleaved, so each meets the same load; `parallel` at once.
const queue = Array.from({ length: runs }, () => programs).flat();
const outcomes: (ProgramOutcome & { waits?: number[][] })[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let k = next++; k < queue.length; k = next++)
      outcomes.push(await runOnce(queue[k] as ClientProgram));
  }),
);
const rows = programs.map((program) => {
  const mine = outcomes.filter((o) => o.program === program);
  return {
    program: program.name,
    verdict: program.verdict,
    breaks: program.rules.includes(RULE),
    runs: mine.length,
    wrong: mine.filter(wrong).length,
    disturbed: mine.filter((o) => o.timingDisturbed).length,
    errors: mine.filter((o) => o.error).length,
    flagged: mine.filter((o) => o.flagged.includes(RULE)).length,
  };
});
const seconds = ((performance.now() - started) / 1000).toFixed(1);
if (values.json) process.stdout.write(`${JSON.stringify({ seconds, rows }, null, 2)}\n`);
else {
  for (const r of rows)
    process.stdout.write(
      `${r.program.padEnd(36)} ${r.verdict.padEnd(4)} runs ${r.runs}  flagged ${r.flagged}  wrong ${r.wrong}  disturbed ${r.disturbed}  errors ${r.errors}\n`,
    );
  const total = rows.reduce((s, r) => s + r.runs, 0);
  const bad = rows.reduce((s, r) => s + r.wrong, 0);
  for (const o of outcomes.filter((o) => o.waits))
    process.stdout.write(
      `wrong: ${o.program.name} (${o.missed.length > 0 ? 'missed' : 'false flag'}): waits ${o.waits
        ?.map((chain) => chain.map(Math.round).join('/'))
        .join('; ')} ms\n`,
    );
  process.stdout.write(
    `${total} runs in ${seconds} s, parallel ${parallel}: ${bad} wrong ${RULE} verdict(s)\n`,
  );
}
process.exit(rows.some((r) => r.wrong > 0) ? 1 : 0);
