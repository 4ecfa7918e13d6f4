/**
 * `npm run mutation-score`: proves the conformance suite. Runs the whole suite against every faulty
 * gateway (one broken rule each) and every valid variant (choices the spec leaves open), and prints the
 * kill rate (faulty gateways whose broken rule's check failed) and the false-failure count (valid
 * variants on which any check failed, SHOULD included, as with --strict). Loopback only.
 */
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { FAULTY_GATEWAYS } from '../test/gateways/faulty-gateways.ts';
import { PACED_FAULTY, PACED_UNTRUTHFUL, PACED_VALID } from '../test/gateways/paced-gateways.ts';
import type { ProofTarget } from '../test/gateways/proof-target.ts';
import { proveAgainst } from '../test/gateways/prove.ts';
import { VALID_VARIANTS } from '../test/gateways/valid-variants.ts';

const options = new Command()
  .name('mutation-score')
  .description('run the conformance suite against the faulty gateways and valid variants of test/gateways')
  .option('--num-runs <n>', 'cases per property check', intOption(1, 10_000), 25)
  .option(
    '--seeds <n>',
    'runs per target, each with its own seed (kill rate over all of them)',
    intOption(1, 100),
    1,
  )
  .option('--seed <n>', 'first seed (default random); seeds are printed', intOption(0, 2 ** 31 - 1))
  .option('--only <ids>', 'comma-separated target ids')
  .option('--json', 'print the results as JSON')
  .parse()
  .opts<{ numRuns: number; seeds: number; seed?: number; only?: string; json?: boolean }>();

interface Outcome {
  target: string;
  kind: 'faulty' | 'valid';
  seed: number;
  expected?: string;
  failing: string[];
  ok: boolean;
  strictExit: number;
  ms: number;
}

async function runTarget(target: ProofTarget, kind: Outcome['kind'], seed: number): Promise<Outcome> {
  const started = Date.now();
  const { failing, strictExit } = await proveAgainst(target, { seed, numRuns: options.numRuns });
  // A valid variant passes with exit 0, unless it leaves a check nothing to observe (then exit 2, never 0).
  const unobservable = Object.values(target.unobservable ?? {}).includes('inconclusive');
  const ok =
    kind === 'faulty'
      ? failing.includes(target.breaks ?? '')
      : failing.length === 0 && strictExit === (unobservable ? 2 : 0);
  return {
    target: target.id,
    kind,
    seed,
    expected: target.breaks,
    failing,
    ok,
    strictExit,
    ms: Date.now() - started,
  };
}

async function main() {
  const only = options.only?.split(',').map((s) => s.trim());
  const pick = (targets: ProofTarget[]) => (only ? targets.filter((t) => only.includes(t.id)) : targets);
  const plan = [
    ...pick([...FAULTY_GATEWAYS, ...PACED_FAULTY, ...PACED_UNTRUTHFUL]).map((t) => [t, 'faulty'] as const),
    ...pick([...VALID_VARIANTS, ...PACED_VALID]).map((t) => [t, 'valid'] as const),
  ];
  if (plan.length === 0) {
    process.stderr.write(`no target matches --only ${options.only}\n`);
    process.exit(2);
  }
  const firstSeed = options.seed ?? Math.floor(Math.random() * 2 ** 30);
  const seeds = Array.from({ length: options.seeds }, (_, i) => firstSeed + i);
  process.stderr.write(
    `${plan.length} targets x ${seeds.length} seed(s) (${seeds.join(', ')}), ${options.numRuns} cases per property\n`,
  );
  const outcomes: Outcome[] = [];
  for (const [target, kind] of plan) {
    for (const seed of seeds) {
      const outcome = await runTarget(target, kind, seed);
      outcomes.push(outcome);
      const verdict =
        kind === 'faulty' ? (outcome.ok ? 'killed' : 'SURVIVED') : outcome.ok ? 'passed' : 'FALSE FAILURE';
      const detail =
        kind === 'faulty'
          ? `expects ${outcome.expected}; failing: ${outcome.failing.join(', ') || 'none'}`
          : `failing: ${outcome.failing.join(', ') || 'none'}, --strict exit ${outcome.strictExit}`;
      process.stderr.write(
        `${verdict.padEnd(14)} ${kind.padEnd(7)} ${target.id.padEnd(30)} seed ${seed}  ${detail}  (${(outcome.ms / 1000).toFixed(1)} s)\n`,
      );
    }
  }
  const faulty = outcomes.filter((o) => o.kind === 'faulty');
  const valid = outcomes.filter((o) => o.kind === 'valid');
  const killed = faulty.filter((o) => o.ok).length;
  const falseFailures = valid.filter((o) => !o.ok).length;
  const summary = {
    faulty_gateways: new Set(faulty.map((o) => o.target)).size,
    valid_variants: new Set(valid.map((o) => o.target)).size,
    seeds,
    num_runs: options.numRuns,
    runs: { faulty: faulty.length, valid: valid.length },
    killed,
    kill_rate: faulty.length ? killed / faulty.length : 1,
    false_failures: falseFailures,
    survivors: faulty.filter((o) => !o.ok).map((o) => `${o.target} (seed ${o.seed})`),
    false_failing: valid
      .filter((o) => !o.ok)
      .map((o) => `${o.target} (seed ${o.seed}): ${o.failing.join(', ')}`),
  };
  if (options.json) process.stdout.write(`${JSON.stringify({ summary, outcomes }, null, 2)}\n`);
  else {
    process.stdout.write(
      [
        '',
        `kill rate: ${killed}/${faulty.length} = ${(summary.kill_rate * 100).toFixed(1)}% (${summary.faulty_gateways} faulty gateways x ${seeds.length} seed(s))`,
        `false failures: ${falseFailures} of ${valid.length} valid-variant runs (${summary.valid_variants} variants, judged as with --strict)`,
        ...summary.survivors.map((s) => `  survived: ${s}`),
        ...summary.false_failing.map((s) => `  false failure: ${s}`),
        '',
      ].join('\n'),
    );
  }
  process.exitCode = summary.survivors.length === 0 && falseFailures === 0 ? 0 : 1;
}

await main();
