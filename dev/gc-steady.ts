/**
 * `npx tsx dev/gc-steady.ts`: what the garbage collector does in the gateway at a steady fixed rate (issue
 * 35): the built CLI (`npm run build`) serves the bench's config in its own process under `node
 * --trace-gc-nvp`, paced load at `--rate` req/s (20 connections) warms it up, then `--seconds` are measured:
 * young collections (scavenges: how many, their pauses, what each promoted to the old generation), full
 * collections (mark-compacts), the bytes allocated per request (the sum of the collections' `allocated=`
 * over the requests answered), CPU per request and the latency percentiles, with the load average beside
 * them. The collector's counts and the bytes promoted depend on the code and Node's version, not on the
 * machine's speed; pauses and latencies do, so quote those from a quiet machine.
 *
 * Usage: npx tsx dev/gc-steady.ts [--rate 2500] [--seconds 5] [--runs 1] [--entry dist/cli/agent-gateway.js]
 *        [--config FILE] [--json]
 */
import { loadavg } from 'node:os';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { fixedRate } from './bench-rounds.ts';
import { BENCH_CONFIG, mintOne } from './bench-targets.ts';
import { allocatedBytes, gcField, gcLines, TRACE_GC } from './gc-trace.ts';
import { BUILT_CLI_ENTRY, spawnServe } from './spawn-serve.ts';

const options = new Command('gc-steady')
  .description("the collector's work in the gateway at a fixed request rate (loopback only)")
  .option('--rate <n>', 'requests per second', intOption(1, 20_000), 2500)
  .option('--seconds <n>', 'measured seconds per run', intOption(1, 60), 5)
  .option('--runs <n>', 'runs, each in a new process', intOption(1, 20), 1)
  .option('--entry <file>', 'the CLI entry to serve (default: the build)', BUILT_CLI_ENTRY)
  .option('--config <file>', 'gateway config', BENCH_CONFIG)
  .option('--json', 'print each run as JSON')
  .parse()
  .opts<{ rate: number; seconds: number; runs: number; entry: string; config: string; json?: boolean }>();

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

/** One run: a new gateway process, warmed up, then measured. */
async function run() {
  // Read before this run starts its gateway and load: the machine's other work, not this run's own.
  const load = loadavg()[0] as number;
  const served = await spawnServe(['--config', options.config], {
    entry: options.entry,
    nodeArgs: [TRACE_GC],
    timeoutMs: 60_000,
  });
  try {
    const target = {
      name: 'gateway',
      url: served.url,
      pid: served.child.pid as number,
      tokens: await mintOne(served.url),
      stop: () => served.stop(),
    };
    await fixedRate(target, options.rate, 3, 20);
    const from = served.output().length;
    const measured = await fixedRate(target, options.rate, options.seconds, 20);
    const traced = served.output().slice(from);
    const lines = gcLines(traced);
    const young = lines.filter((line) => /\bgc=s\b/.test(line));
    const full = lines.filter((line) => /\bgc=(mc|mmc|ms)\b/.test(line));
    const pauses = young.map((line) => gcField(line, 'pause'));
    return {
      load,
      achievedRate: measured.achievedRate,
      failed: measured.non2xx + measured.errors,
      cpuMicros: measured.cpuMicros,
      p50: measured.p50,
      p99: measured.p99,
      young: {
        count: young.length,
        pauseMs: sum(pauses),
        medianMs: median(pauses),
        maxMs: Math.max(0, ...pauses),
        promotedKb: young.length
          ? sum(young.map((line) => gcField(line, 'promoted'))) / young.length / 1024
          : 0,
      },
      full: { count: full.length, pauseMs: sum(full.map((line) => gcField(line, 'pause'))) },
      // What the request path allocates: the bytes each collection says were allocated since the one
      // before, over the requests answered meanwhile (the first collection's count began a little earlier).
      allocatedBytesPerRequest:
        measured.achievedRate > 0
          ? allocatedBytes(traced) / (measured.achievedRate * options.seconds)
          : Number.NaN,
    };
  } finally {
    await served.stop();
  }
}

for (let k = 1; k <= options.runs; k++) {
  const figures = await run();
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ run: k, rate: options.rate, seconds: options.seconds, ...figures })}\n`,
    );
    continue;
  }
  const { young, full } = figures;
  process.stdout.write(
    `run ${k} at ${options.rate} req/s for ${options.seconds} s (load average ${figures.load.toFixed(2)} before the run, ${process.version}): ` +
      `${figures.achievedRate.toFixed(0)} req/s answered (${figures.failed} failed), ${figures.cpuMicros.toFixed(1)} µs CPU/request, ${(figures.allocatedBytesPerRequest / 1024).toFixed(1)} KB allocated/request, p50 ${figures.p50.toFixed(2)} ms, p99 ${figures.p99.toFixed(2)} ms; ` +
      `young collections ${young.count} (${young.pauseMs.toFixed(1)} ms, median ${young.medianMs.toFixed(2)} ms, max ${young.maxMs.toFixed(2)} ms, ${young.promotedKb.toFixed(0)} KB promoted each); ` +
      `full collections ${full.count} (${full.pauseMs.toFixed(1)} ms)\n`,
  );
}
