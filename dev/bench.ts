/**
 * `npm run bench`: the reference gateway's authenticated `POST /v1/web/search`, the whole pipeline on
 * (limits checked but never reached, journal, secret scan), against bare node:http servers, all measured by
 * autocannon in one run on loopback, each server in its own process, in alternating rounds (a shared machine
 * drifts during a run; medians are compared).
 *
 * Servers: a like-for-like bare server (reads and parses the body, JSON.stringify of a same-size answer per
 * request, the gateway's headers), the old precomputed-body bare server, the gateway with one agent, and the
 * gateway with the load spread over `--agents` agents (their tokens, limiter keys and journal owners).
 * Besides req/s and latency it prints each server's CPU time per request (read from /proc, so it holds
 * even when other work shares the machine) and its resident memory.
 *
 * `npm run bench -- --stages` prints the cost of each pipeline stage instead (dev/bench-stages.ts).
 *
 * `npm run bench -- --store redis://HOST:PORT [--workers N]` measures shared state instead: the gateway in
 * memory, on Redis with one process, and on Redis with N workers (node:cluster), with CPU per request of
 * the gateway's processes and of Redis, and the Redis round trip of one admission (loopback).
 *
 * By job: bench-targets.ts (the servers, their CPU time and memory), bench-rounds.ts (rounds of load and
 * their figures), bench-shared-state.ts (the --store run), bench-load.ts (paced load at a fixed rate).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { type LoadOptions, withLoadOptions } from './bench-options.ts';
import {
  answeredBy,
  type FixedRateMeasurement,
  fixedRate,
  fixedTable,
  load,
  type Measurement,
  perRoundRatio,
  QUERIES,
  type Ratio,
  shown,
  summarise,
  summariseFixed,
  table,
  verdict,
} from './bench-rounds.ts';
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

const options = withLoadOptions(
  new Command()
    .name('bench')
    .description('benchmark the reference gateway against bare node:http servers (loopback only)'),
  5,
)
  .option('-a, --agents <n>', 'agents the spread-out run uses (0: skip it)', intOption(0, 100_000), 10_000)
  .option(
    '--rate <n>',
    "the fixed request rate (req/s) of the CPU-per-request runs (default: half the slowest server's warm-up throughput)",
    intOption(1, 1_000_000),
  )
  .option('--rate-connections <n>', 'connections of the fixed-rate runs', intOption(1, 1000), 16)
  .option('--fixed-only', 'skip the saturated runs (only the fixed-rate CPU per request)')
  .option(
    '--cpu-prof <dir>',
    'write V8 CPU profiles of the 1-agent gateway and the bare like-for-like server into DIR, and print their top frames',
  )
  .option('--stages', 'print the cost of each pipeline stage instead (no HTTP load)')
  .option('--proxy', 'measure proxy mode instead: the gateway alone and through `agent-gateway proxy`')
  .option(
    '--store <url>',
    'measure shared state on this Redis instead (redis://HOST:PORT; keys under agw-bench-*)',
  )
  .option('--workers <n>', 'workers of the shared-state run (with --store)', intOption(1, 64), 2)
  .option('--json', 'print the figures as JSON')
  .parse()
  .opts<
    LoadOptions & {
      agents: number;
      rate?: number;
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
    await sharedStateBenchmark(options.store, options);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agent-gateway-bench-'));
  const profileDir = options.cpuProf ? join(process.cwd(), options.cpuProf) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profiled = (name: string) =>
    profileDir
      ? [
          `--cpu-prof`,
          `--cpu-prof-dir=${profileDir}`,
          `--cpu-prof-name=${name}.cpuprofile`,
          '--cpu-prof-interval=250',
        ]
      : [];
  const targets: Target[] = [];
  // When each profiled process was started, and when the load began: its start-up is left out of the profile.
  const spawnedAt = new Map<string, number>();
  try {
    spawnedAt.set('gateway', performance.now());
    const single = await startGateway('gateway, 1 agent', BENCH_CONFIG, mintOne, [], profiled('gateway'));
    targets.push(single);
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
    targets.unshift(
      await withTokens(bare),
      await withTokens(await startBare('precomputed', sampleFile, 'bare, precomputed body')),
    );
    if (options.agents > 0) {
      const config = fleetConfig(dir, options.agents);
      const fleet = await startGateway(`gateway, ${options.agents} agents`, config, async () => {
        const local = createGateway({ configFile: config, log: () => {} });
        return local.registry.list().map((agent) => local.mintToken(agent.id));
      });
      targets.push(fleet);
    }
    process.stderr.write(
      `Gateway: ${ENTRY ? 'the built CLI (dist/)' : 'the sources through tsx (run npm run build to measure the built CLI)'}.\n`,
    );
    const loadBegan = performance.now();
    if (options.warmup > 0) {
      process.stderr.write(`warming up (${options.warmup} s per server at saturation)...\n`);
      for (const target of targets) await load(target, options.warmup, options.connections);
    }
    // The capacity probe the fixed rate is chosen from: saturated, after the warm-up (the 10,000-agent
    // gateway's first requests verify cold tokens, slower than it runs later).
    const capacity = new Map<string, number>();
    if (options.rate === undefined) {
      process.stderr.write(`probing each server's throughput (2 s at saturation)...\n`);
      for (const target of targets)
        capacity.set(target.name, (await load(target, 2, options.connections)).requestsPerSecond);
    }
    const slowest = capacity.size > 0 ? Math.min(...capacity.values()) : Number.NaN;
    // Half the slowest server's throughput: every server then has idle time (no queue), so its CPU per
    // request is its own cost, not the cost of running flat out on a machine it shares with the generator.
    const rate = options.rate ?? Math.max(100, Math.floor(slowest / 2 / 100) * 100);
    process.stderr.write(
      `Benchmark: ${options.rounds} alternating rounds; per server and round: ${options.fixedOnly ? '' : `${options.duration} s saturated (${options.connections} connections), then `}` +
        `${options.duration} s at a fixed ${rate} req/s (${options.rateConnections} connections, paced)` +
        `${options.rate === undefined ? `, half the slowest server's probed throughput (${slowest.toFixed(0)} req/s)` : ''}; ` +
        `${Buffer.byteLength(sampleText)}-byte answers, loopback only.\n`,
    );
    const rounds = new Map<string, Measurement[]>(targets.map((t) => [t.name, []]));
    const fixedRounds = new Map<string, FixedRateMeasurement[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= options.rounds; round++) {
      const line: string[] = [];
      // Alternate the order, so no server always runs first (or last) in a round.
      const order = round % 2 ? targets : [...targets].reverse();
      for (const target of order) {
        let saturated = '';
        if (!options.fixedOnly) {
          const m = await load(target, options.duration, options.connections);
          rounds.get(target.name)?.push(m);
          saturated = `${m.requestsPerSecond.toFixed(0)} req/s, `;
        }
        const f = await fixedRate(target, rate, options.duration, options.rateConnections);
        fixedRounds.get(target.name)?.push(f);
        line.push(`${target.name} ${saturated}${f.cpuMicros.toFixed(1)} µs/req at ${rate}/s`);
      }
      process.stderr.write(`round ${round}/${options.rounds}: ${line.join('; ')}\n`);
    }
    const [likeForLikeName, precomputedName, gatewayName, fleetName] = targets.map((t) => t.name) as [
      string,
      string,
      string,
      string | undefined,
    ];
    const saturated = options.fixedOnly
      ? []
      : targets.map((t) => summarise(t.name, rounds.get(t.name) ?? []));
    const fixedOf = (name: string) => fixedRounds.get(name) ?? [];
    const fixed = targets.map((t) => summariseFixed(t.name, rate, fixedOf(t.name)));
    const roundsOf = (name: string) => rounds.get(name) ?? [];
    const rps = (m: Measurement) => m.requestsPerSecond;
    // CPU per request compared as efficiency: bare µs / gateway µs (1 = as cheap as the bare server).
    const efficiency = (m: { cpuMicros: number }) => 1 / m.cpuMicros;
    const p99 = (m: FixedRateMeasurement) => m.p99;
    const ratios = {
      fixed_rate: rate,
      cpu_at_fixed_rate_like_for_like_vs_gateway: perRoundRatio(
        fixedOf(gatewayName),
        fixedOf(likeForLikeName),
        efficiency,
      ),
      p99_at_fixed_rate_gateway_over_like_for_like: perRoundRatio(
        fixedOf(gatewayName),
        fixedOf(likeForLikeName),
        p99,
      ),
      ...(fleetName
        ? {
            cpu_at_fixed_rate_fleet_over_single: perRoundRatio(
              fixedOf(fleetName),
              fixedOf(gatewayName),
              (m) => m.cpuMicros,
            ),
          }
        : {}),
      ...(options.fixedOnly
        ? {}
        : {
            saturated_gateway_vs_like_for_like: perRoundRatio(
              roundsOf(gatewayName),
              roundsOf(likeForLikeName),
              rps,
            ),
            saturated_gateway_vs_precomputed: perRoundRatio(
              roundsOf(gatewayName),
              roundsOf(precomputedName),
              rps,
            ),
            saturated_cpu_like_for_like_vs_gateway: perRoundRatio(
              roundsOf(gatewayName),
              roundsOf(likeForLikeName),
              efficiency,
            ),
            ...(fleetName
              ? { saturated_fleet_vs_single: perRoundRatio(roundsOf(fleetName), roundsOf(gatewayName), rps) }
              : {}),
          }),
    };
    const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, ${platform()} ${release()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`;
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify(
          {
            machine,
            rate,
            saturated,
            fixed,
            ratios,
            rounds: Object.fromEntries(rounds),
            fixed_rounds: Object.fromEntries(fixedRounds),
          },
          null,
          2,
        )}\n`,
      );
    } else {
      const cpuRatio = ratios.cpu_at_fixed_rate_like_for_like_vs_gateway;
      const p99Ratio = ratios.p99_at_fixed_rate_gateway_over_like_for_like;
      const lines = [
        `Machine: ${machine}`,
        '',
        `At a fixed ${rate} req/s (neither server saturated; median of ${options.rounds} rounds):`,
        fixedTable(fixed),
        '',
        `gateway / bare like-for-like by CPU per request at ${rate} req/s (bare µs / gateway µs, per-round ratios): ${shown(cpuRatio)}; target >= 0.65: ${verdict(cpuRatio.median >= 0.65)}`,
        `gateway p99 / bare like-for-like p99 at ${rate} req/s: ${shown(p99Ratio)}; target <= 1.5: ${verdict(p99Ratio.median <= 1.5)}`,
      ];
      const fleetCpu = ratios.cpu_at_fixed_rate_fleet_over_single;
      if (fleetCpu)
        lines.push(
          `${options.agents} agents / 1 agent by CPU per request at ${rate} req/s: ${shown(fleetCpu)}; target <= 1.10: ${verdict(fleetCpu.median <= 1.1)}`,
        );
      if (!options.fixedOnly) {
        const [likeForLike, , gateway, fleet] = saturated as [
          Measurement,
          Measurement,
          Measurement,
          Measurement | undefined,
        ];
        lines.push(
          '',
          `Saturated (${options.connections} connections, autocannon; the load generator shares the machine):`,
          table(saturated),
          '',
          `gateway / bare like-for-like, req/s: ${shown(ratios.saturated_gateway_vs_like_for_like as Ratio)}; by CPU per request: ${shown(ratios.saturated_cpu_like_for_like_vs_gateway as Ratio)}`,
          `gateway / bare precomputed body, req/s: ${shown(ratios.saturated_gateway_vs_precomputed as Ratio)}`,
          // Little's law: with every connection always waiting for an answer, the mean latency is the
          // connections divided by the throughput, whatever the server does: the floor this machine sets.
          `mean latency floor at ${options.connections} connections (connections / req/s, Little's law): bare like-for-like ${((1000 * options.connections) / likeForLike.requestsPerSecond).toFixed(1)} ms, gateway ${((1000 * options.connections) / gateway.requestsPerSecond).toFixed(1)} ms`,
        );
        if (fleet && ratios.saturated_fleet_vs_single)
          lines.push(
            `${options.agents} agents / 1 agent, req/s: ${shown(ratios.saturated_fleet_vs_single)}; RSS ${fleet.rssMb.toFixed(0)} MB vs ${gateway.rssMb.toFixed(0)} MB`,
          );
      }
      const slow = fixed.filter((m) => m.achievedRate < rate * 0.97);
      if (slow.length > 0)
        lines.push(
          `${slow.map((m) => m.name).join(', ')} fell behind the fixed rate: its figures are saturated ones; pick a lower --rate.`,
        );
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    const failed = [...saturated, ...fixed].filter((m) => m.non2xx + m.errors > 0);
    if (failed.length > 0) {
      process.stderr.write(
        `${failed.map((m) => m.name).join(', ')} answered non-2xx or failed requests: the figures do not measure the tool path.\n`,
      );
      process.exitCode = 1;
    }
    if (profileDir) {
      await Promise.all(targets.map((t) => t.stop()));
      targets.length = 0;
      for (const [name, file] of [
        [gatewayName, 'gateway'],
        [likeForLikeName, 'bare-like-for-like'],
      ] as const) {
        const path = join(profileDir, `${file}.cpuprofile`);
        if (!existsSync(path)) continue;
        process.stdout.write(
          `\nCPU profile of ${name} (its CPU figures above include the profiler's own sampling: compare CPU per request in a run without --cpu-prof)`,
        );
        process.stdout.write(
          `\nCPU profile of ${name} (${path}; from the first load to exit, start-up left out; warm-up and saturated runs included):\n${formatProfile(path, 40, answeredBy.get(name), loadBegan - (spawnedAt.get(file) ?? loadBegan))}\n`,
        );
      }
    }
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
