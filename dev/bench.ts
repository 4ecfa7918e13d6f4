/**
 * `npm run bench`: the reference gateway's authenticated `POST /v1/web/search`, the whole pipeline on
 * (limits checked but never reached, journal, secret scan), against bare node:http servers, all measured by
 * autocannon in one run on loopback, each server in its own process, in alternating rounds (a shared machine
 * drifts during a run; medians are compared).
 *
 * Servers: a like-for-like bare server (reads and parses the body, JSON.stringify of a same-size answer per
 * request, the gateway's headers), the old precomputed-body bare server, the gateway with one agent run two
 * ways (the built CLI, `node dist/cli/agent-gateway.js serve`, and a clone's `npm start`, the sources through
 * tsx), and the built gateway with the load spread over `--agents` agents (their tokens, limiter keys and
 * journal owners). The headline figure is each server's CPU time per request (read from /proc, so it holds
 * even when other work shares the machine) at a fixed rate (default 2,500 req/s, 20 connections), with the
 * machine's load average printed beside every figure (bench-report.ts). Every fixed-rate round runs before
 * any saturated one, and the warm-up is at the fixed rate: saturation lifts the 1-minute load average for a
 * minute, and a quiet machine must give a quiet fixed-rate phase.
 *
 * `npm run bench -- --stages` prints the cost of each pipeline stage instead (dev/bench-stages.ts).
 *
 * `npm run bench -- --store redis://HOST:PORT [--workers N]` measures shared state instead: the gateway in
 * memory, on Redis with one process, and on Redis with N workers (node:cluster), with CPU per request of
 * the gateway's processes and of Redis, and the Redis round trip of one admission (loopback).
 *
 * By job: bench-targets.ts (the servers, their CPU time and memory), bench-rounds.ts (rounds of load and
 * their figures), bench-report.ts (the ratios, the targets and the load average, as text or JSON), bench-shared-state.ts (the --store run), bench-load.ts (paced load at a fixed rate).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { type LoadOptions, withLoadOptions } from './bench-options.ts';
import {
  type BenchFigures,
  type BenchNames,
  jsonReport,
  type LoadSamples,
  sampleLoad,
  textReport,
} from './bench-report.ts';
import { answeredBy, fixedRate, load, QUERIES, summarise, summariseFixed } from './bench-rounds.ts';
import { sharedStateBenchmark } from './bench-shared-state.ts';
import {
  BENCH_CONFIG,
  ENTRY,
  fleetConfig,
  mintOne,
  startBare,
  startGateway,
  type Target,
} from './bench-targets.ts';
import { formatProfile } from './cpuprofile-top.ts';
import { TRACE_GC } from './gc-trace.ts';
import { SOURCES_CLI_ENTRY } from './spawn-serve.ts';

const options = withLoadOptions(
  new Command()
    .name('bench')
    .description('benchmark the reference gateway against bare node:http servers (loopback only)'),
  5,
)
  .option('-a, --agents <n>', 'agents the spread-out run uses (0: skip it)', intOption(0, 100_000), 10_000)
  .option(
    '--rate <n>',
    "the fixed request rate (req/s) of the CPU-per-request runs, or auto: half the slowest server's probed throughput",
    (value: string) => (value === 'auto' ? 'auto' : intOption(1, 1_000_000)(value)),
    2500,
  )
  .option('--rate-connections <n>', 'connections of the fixed-rate runs', intOption(1, 1000), 20)
  .option('--fixed-only', 'skip the saturated runs (only the fixed-rate CPU per request)')
  .option(
    '--baseline <entry>',
    "another build's CLI entry (e.g. ../main/dist/cli/agent-gateway.js), measured beside this one: before and after a change in one run",
  )
  .option(
    '--cpu-prof <dir>',
    'write V8 CPU profiles of the 1-agent gateway and the bare like-for-like server into DIR, and print their top frames',
  )
  .option('--stages', 'print the cost of each pipeline stage instead (no HTTP load)')
  .option('--proxy', 'measure proxy mode instead: the gateway alone and through `agent-gateway proxy`')
  .option(
    '--store <url>',
    'measure shared state on this Redis instead (redis://HOST:PORT; keys under agw-bench-*), or auto: on a redis-server of its own',
  )
  .option('--workers <n>', 'workers of the shared-state run (with --store)', intOption(1, 64), 2)
  .option('--json', 'print the figures as JSON')
  .parse()
  .opts<
    LoadOptions & {
      agents: number;
      rate: number | 'auto';
      baseline?: string;
      rateConnections: number;
      fixedOnly?: boolean;
      cpuProf?: string;
      stages?: boolean;
      proxy?: boolean;
      store?: string;
      workers: number;
      json?: boolean;
    }
  >();

async function main() {
  // Read before the run starts anything of its own (servers, Redis, load): the run is labelled by it.
  const before = sampleLoad();
  if (options.stages) {
    const { runStageBenchmark } = await import('./bench-stages.ts');
    await runStageBenchmark({ json: Boolean(options.json) });
    return;
  }
  if (options.proxy) {
    const { runProxyBenchmark } = await import('./bench-proxy.ts');
    await runProxyBenchmark({ ...options, json: Boolean(options.json) });
    return;
  }
  if (options.store) {
    await sharedStateBenchmark(options.store, options, before);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agent-gateway-bench-'));
  const profileDir = options.cpuProf ? resolve(options.cpuProf) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // Each process profiles into a folder of its own: `npm start` runs tsx, whose loader thread writes a
  // profile of its own beside the main thread's (the largest is the main thread's, read below).
  // Every server runs under TRACE_GC: its collections' lines give the bytes a request allocates.
  const profiled = (name: string) => [
    TRACE_GC,
    ...(profileDir
      ? [`--cpu-prof`, `--cpu-prof-dir=${join(profileDir, name)}`, '--cpu-prof-interval=250']
      : []),
  ];
  const loadAverage: LoadSamples = { before, start: sampleLoad(), rounds: [], end: Number.NaN };
  const targets: Target[] = [];
  // When each profiled process was started, and when the load began: its start-up is left out of the profile.
  const spawnedAt = new Map<string, number>();
  try {
    // The gateway as the package runs it (the built CLI), and as a clone runs it (`npm start`: the sources
    // through tsx), each with one agent. Without a build, only the second.
    const ways = [
      ...(ENTRY ? [{ name: 'gateway (built CLI), 1 agent', entry: ENTRY, file: 'gateway' }] : []),
      {
        name: 'gateway (npm start), 1 agent',
        entry: SOURCES_CLI_ENTRY,
        file: ENTRY ? 'gateway-npm-start' : 'gateway',
      },
      ...(options.baseline
        ? [
            {
              name: 'gateway (baseline), 1 agent',
              entry: resolve(options.baseline),
              file: 'gateway-baseline',
            },
          ]
        : []),
    ];
    const gateways: Target[] = [];
    for (const way of ways) {
      spawnedAt.set(way.file, performance.now());
      gateways.push(await startGateway(way.name, BENCH_CONFIG, mintOne, [], profiled(way.file), way.entry));
    }
    const single = gateways[0] as Target;
    const sample = await fetch(`${single.url}/v1/web/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-identity': single.tokens[0] as string },
      body: JSON.stringify({ query: QUERIES[0], count: 5 }),
    });
    const sampleText = await sample.text();
    const sampleFile = join(dir, 'sample.json');
    writeFileSync(sampleFile, sampleText);
    const withTokens = async (started: Omit<Target, 'tokens'>) => ({ ...started, tokens: single.tokens });
    spawnedAt.set('bare-like-for-like', performance.now());
    const bare = await startBare(
      'like-for-like',
      sampleFile,
      'bare, like-for-like',
      profiled('bare-like-for-like'),
    );
    targets.push(
      await withTokens(bare),
      await withTokens(await startBare('precomputed', sampleFile, 'bare, precomputed body', [TRACE_GC])),
      ...gateways,
    );
    const names: BenchNames = {
      likeForLike: bare.name,
      precomputed: 'bare, precomputed body',
      gateways: gateways.map((g) => g.name),
      agents: options.agents,
    };
    if (options.agents > 0) {
      const config = fleetConfig(dir, options.agents);
      names.fleet = `gateway (${ENTRY ? 'built CLI' : 'npm start'}), ${options.agents} agents`;
      spawnedAt.set('gateway-fleet', performance.now());
      const fleet = await startGateway(
        names.fleet,
        config,
        async () => {
          const local = createGateway({ configFile: config, log: () => {} });
          return local.registry.list().map((agent) => local.mintToken(agent.id));
        },
        [],
        profiled('gateway-fleet'),
      );
      targets.push(fleet);
    }
    if (!ENTRY)
      process.stderr.write('No build (dist/): the built CLI is not measured; run npm run build first.\n');
    const loadBegan = performance.now();
    const rate = await fixedRateOf(targets);
    // The warm-up (JIT, connection pools) runs at the fixed rate, not at saturation: a saturated phase lifts
    // the 1-minute load average for a minute after it, and the fixed-rate figures are the ones a quiet run
    // is quoted on. For the same reason every fixed-rate round runs before any saturated one.
    // A server whose load is spread over N agents warms up until each agent has sent once (N / rate seconds at
    // least): the figure compared is the steady state, not an agent's first request (its token verified and
    // its secret forms built once, then remembered; that one-time cost is printed beside it).
    if (options.warmup > 0) {
      process.stderr.write(
        `warming up (${options.warmup} s per server at ${rate} req/s, every agent once)...\n`,
      );
      for (const target of targets) {
        const seconds = Math.max(options.warmup, Math.ceil(target.tokens.length / rate) + 1);
        const warm = await fixedRate(target, rate, seconds, options.rateConnections);
        if (target.tokens.length > 1)
          process.stderr.write(
            `  ${target.name}: warm-up ${seconds} s, ${warm.cpuMicros.toFixed(1)} µs/req (each of its ${target.tokens.length} agents' first requests among them)\n`,
          );
      }
    }
    process.stderr.write(
      `Benchmark: ${options.rounds} alternating rounds of ${options.duration} s per server at a fixed ${rate} req/s ` +
        `(${options.rateConnections} connections, paced)${options.fixedOnly ? '' : `, then ${options.rounds} of ${options.duration} s saturated (${options.connections} connections)`}; ` +
        `${Buffer.byteLength(sampleText)}-byte answers, loopback only.\n`,
    );
    const figures: BenchFigures = {
      rate,
      rounds: options.rounds,
      fixed: [],
      fixedRounds: new Map(targets.map((t) => [t.name, []])),
      saturated: [],
      saturatedRounds: new Map(targets.map((t) => [t.name, []])),
      load: loadAverage,
    };
    await runRounds('fixed rate', targets, loadAverage, async (target) => {
      const f = await fixedRate(target, rate, options.duration, options.rateConnections);
      figures.fixedRounds.get(target.name)?.push(f);
      return `${target.name} ${f.cpuMicros.toFixed(1)} µs/req at ${rate}/s`;
    });
    loadAverage.end = sampleLoad();
    if (!options.fixedOnly) {
      figures.saturatedLoad = { before, start: loadAverage.end, rounds: [], end: Number.NaN };
      const saturatedLoad = figures.saturatedLoad;
      await runRounds('saturated', targets, saturatedLoad, async (target) => {
        const m = await load(target, options.duration, options.connections);
        figures.saturatedRounds.get(target.name)?.push(m);
        return `${target.name} ${m.requestsPerSecond.toFixed(0)} req/s`;
      });
      saturatedLoad.end = sampleLoad();
    }
    figures.fixed = targets.map((t) => summariseFixed(t.name, rate, figures.fixedRounds.get(t.name) ?? []));
    if (!options.fixedOnly)
      figures.saturated = targets.map((t) => summarise(t.name, figures.saturatedRounds.get(t.name) ?? []));
    process.stdout.write(
      `${options.json ? jsonReport(names, figures) : textReport(names, figures, options.connections)}\n`,
    );
    const failed = [...figures.saturated, ...figures.fixed].filter((m) => m.non2xx + m.errors > 0);
    if (failed.length > 0) {
      process.stderr.write(
        `${failed.map((m) => m.name).join(', ')} answered non-2xx or failed requests: the figures do not measure the tool path.\n`,
      );
      process.exitCode = 1;
    }
    if (profileDir) {
      await Promise.all(targets.map((t) => t.stop()));
      targets.length = 0;
      const profiles = [
        ...ways.map((way) => [way.name, way.file] as const),
        [names.likeForLike, 'bare-like-for-like'] as const,
        ...(names.fleet ? [[names.fleet, 'gateway-fleet'] as const] : []),
      ];
      for (const [name, file] of profiles) {
        const path = largestProfile(join(profileDir, file));
        if (!path) continue;
        process.stdout.write(
          `\nCPU profile of ${name} (${path}; from the first load to exit, start-up left out; warm-up and saturated runs included; its CPU figures above include the profiler's own sampling):\n${formatProfile(path, 40, answeredBy.get(name), loadBegan - (spawnedAt.get(file) ?? loadBegan))}\n`,
        );
      }
    }
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `options.rounds` rounds of one phase, each server once per round, the order alternating so no server
 * always runs first (or last); the load average sampled before each round and printed with its line.
 */
async function runRounds(
  phase: string,
  targets: Target[],
  samples: LoadSamples,
  measure: (target: Target) => Promise<string>,
): Promise<void> {
  for (let round = 1; round <= options.rounds; round++) {
    samples.rounds.push(sampleLoad());
    const order = round % 2 ? targets : [...targets].reverse();
    const line: string[] = [];
    for (const target of order) line.push(await measure(target));
    process.stderr.write(
      `${phase}, round ${round}/${options.rounds} (load average ${samples.rounds.at(-1)?.toFixed(2)}): ${line.join('; ')}\n`,
    );
  }
}

/** The largest `.cpuprofile` in a folder (a process's main thread), if any. */
function largestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/**
 * The fixed rate: `--rate N`, or with `--rate auto` half the slowest server's throughput in a saturated
 * probe after the warm-up (every server then has idle time: its CPU per request is its own cost).
 */
async function fixedRateOf(targets: Target[]): Promise<number> {
  if (options.rate !== 'auto') return options.rate;
  process.stderr.write(`probing each server's throughput (2 s at saturation)...\n`);
  let slowest = Number.POSITIVE_INFINITY;
  for (const target of targets)
    slowest = Math.min(slowest, (await load(target, 2, options.connections)).requestsPerSecond);
  const rate = Math.max(100, Math.floor(slowest / 2 / 100) * 100);
  process.stderr.write(`fixed rate: ${rate} req/s, half the slowest server's ${slowest.toFixed(0)} req/s\n`);
  return rate;
}

await main();
