/**
 * `npx tsx dev/verdict-stability.ts`: deterministic verdicts (issue 33). Runs the whole conformance suite
 * against every target of the suite-proof catalogue (faulty gateways, valid variants, paced and held-out
 * ones) with several seeds, several targets at once (so the machine is loaded, as CI machines are), and
 * prints, per target, whether any check's verdict changed between seeds. A verdict that depends on how many
 * requests landed in a window, or on how fast the machine was, shows up here as a changed verdict.
 * Loopback only. Exit 1 when a verdict changed (or a target failed to run), 0 when every one held.
 *
 * Usage: npx tsx dev/verdict-stability.ts [--seeds 5] [--seed N] [--parallel 3] [--num-runs 8] [--only a,b] [--json]
 */
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { exitCodeFor } from '../conformance/run/runner.ts';
import { FAULTY_GATEWAYS } from '../test/gateways/faulty-gateways.ts';
import {
  PACED_BEYOND,
  PACED_FAULTY,
  PACED_UNTRUTHFUL,
  PACED_VALID,
} from '../test/gateways/paced-gateways.ts';
import type { ProofTarget } from '../test/gateways/proof-target.ts';
import { proveAgainst } from '../test/gateways/prove.ts';
import { VALID_VARIANTS } from '../test/gateways/valid-variants.ts';

const options = new Command()
  .name('verdict-stability')
  .description('run the suite-proof catalogue with several seeds and report every verdict that changed')
  .option('--seeds <n>', 'runs per target, each with its own seed', intOption(2, 100), 5)
  .option('--seed <n>', 'first seed (default random); seeds are printed', intOption(0, 2 ** 31 - 1))
  .option('--parallel <n>', 'targets run at once', intOption(1, 16), 3)
  .option('--num-runs <n>', 'cases per property check', intOption(1, 10_000), 8)
  .option('--only <ids>', 'comma-separated target ids')
  .option('--json', 'print the results as JSON')
  .parse()
  .opts<{ seeds: number; seed?: number; parallel: number; numRuns: number; only?: string; json?: boolean }>();

interface Run {
  seed: number;
  verdicts: Record<string, string>;
  exit: number;
  strictExit: number;
  ms: number;
  error?: string;
}

async function runOnce(target: ProofTarget, seed: number): Promise<Run> {
  const started = Date.now();
  try {
    const { report, strictExit } = await proveAgainst(target, { seed, numRuns: options.numRuns });
    return {
      seed,
      verdicts: Object.fromEntries(report.checks.map((c) => [c.id, c.verdict])),
      exit: exitCodeFor(report, false),
      strictExit,
      ms: Date.now() - started,
    };
  } catch (error) {
    return {
      seed,
      verdicts: {},
      exit: 2,
      strictExit: 2,
      ms: Date.now() - started,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** The checks whose verdict differs between runs, with the verdicts seen per seed. */
function changed(runs: Run[]): Record<string, string[]> {
  const ids = new Set(runs.flatMap((r) => Object.keys(r.verdicts)));
  const out: Record<string, string[]> = {};
  for (const id of ids) {
    const seen = runs.map((r) => r.verdicts[id] ?? 'absent');
    if (new Set(seen).size > 1) out[id] = runs.map((r, i) => `${r.seed}:${seen[i]}`);
  }
  const exits = runs.map((r) => `${r.exit}/${r.strictExit}`);
  if (new Set(exits).size > 1) out['(exit / strict exit)'] = runs.map((r, i) => `${r.seed}:${exits[i]}`);
  return out;
}

async function main() {
  const only = options.only?.split(',').map((s) => s.trim());
  const all = [
    ...FAULTY_GATEWAYS,
    ...PACED_FAULTY,
    ...PACED_UNTRUTHFUL,
    ...PACED_BEYOND,
    ...VALID_VARIANTS,
    ...PACED_VALID,
  ];
  const plan = only ? all.filter((t) => only.includes(t.id)) : all;
  if (plan.length === 0) {
    process.stderr.write(`no target matches --only ${options.only}\n`);
    process.exit(2);
  }
  const firstSeed = options.seed ?? Math.floor(Math.random() * 2 ** 30);
  const seeds = Array.from({ length: options.seeds }, (_, i) => firstSeed + i * 7919);
  process.stderr.write(
    `${plan.length} targets x ${seeds.length} seeds (${seeds.join(', ')}), ${options.numRuns} cases per property, ${options.parallel} at once\n`,
  );
  const started = Date.now();
  const results = new Map<string, Run[]>();
  const queue = plan.flatMap((target) => seeds.map((seed) => ({ target, seed })));
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const run = await runOnce(job.target, job.seed);
      results.set(job.target.id, [...(results.get(job.target.id) ?? []), run]);
      process.stderr.write(
        `  ${job.target.id.padEnd(40)} seed ${String(job.seed).padEnd(11)} exit ${run.exit} (strict ${run.strictExit})  ${(run.ms / 1000).toFixed(1)} s${run.error ? `  ERROR ${run.error}` : ''}\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: options.parallel }, worker));
  const rows = plan.map((target) => {
    const runs = (results.get(target.id) ?? []).sort((a, b) => a.seed - b.seed);
    return { target: target.id, runs, changed: changed(runs), errors: runs.filter((r) => r.error).length };
  });
  const unstable = rows.filter((r) => Object.keys(r.changed).length > 0 || r.errors > 0);
  const summary = {
    targets: rows.length,
    seeds,
    runs: rows.reduce((n, r) => n + r.runs.length, 0),
    parallel: options.parallel,
    wall_seconds: Math.round((Date.now() - started) / 1000),
    verdicts_compared: rows.reduce((n, r) => n + Object.keys(r.runs[0]?.verdicts ?? {}).length, 0),
    unstable_targets: unstable.length,
  };
  if (options.json) process.stdout.write(`${JSON.stringify({ summary, rows }, null, 2)}\n`);
  else {
    process.stdout.write(
      [
        '',
        `${summary.targets} targets x ${seeds.length} seeds = ${summary.runs} runs, ${options.parallel} at once, ${summary.wall_seconds} s`,
        `targets whose verdicts changed between seeds: ${unstable.length}`,
        ...unstable.flatMap((r) => [
          `  ${r.target}${r.errors ? ` (${r.errors} run(s) failed to run)` : ''}`,
          ...Object.entries(r.changed).map(([id, seen]) => `    ${id}: ${seen.join(', ')}`),
        ]),
        '',
      ].join('\n'),
    );
  }
  process.exitCode = unstable.length === 0 ? 0 : 1;
}

await main();
