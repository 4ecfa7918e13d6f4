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
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { stringify } from 'yaml';
import { intOption } from '../cli/cli-options.ts';
import { readYamlFile } from '../mock-server/config/load-config.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { type PacedResult, pacedLoad } from './bench-load.ts';
import { formatProfile } from './cpuprofile-top.ts';
import { BUILT_CLI_ENTRY, spawnServe } from './spawn-serve.ts';

export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** CPU time (user + system) the server process spent per answered request, in microseconds. */
  cpuMicros: number;
  /** Resident memory of the server process (and its workers) after the round, in MB. */
  rssMb: number;
  /** CPU time Redis spent per answered request, in microseconds (shared-state runs). */
  sidecarCpuMicros?: number;
  non2xx: number;
  errors: number;
}

const options = new Command()
  .name('bench')
  .description('benchmark the reference gateway against bare node:http servers (loopback only)')
  .option('-d, --duration <seconds>', 'measured seconds per server and round', intOption(1, 120), 5)
  .option('-r, --rounds <n>', 'alternating rounds (medians are reported)', intOption(1, 20), 5)
  .option('-c, --connections <n>', 'concurrent connections', intOption(1, 1000), 50)
  .option('-w, --warmup <seconds>', 'warm-up seconds per server (not measured)', intOption(0, 60), 2)
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
  .opts<{
    duration: number;
    rounds: number;
    connections: number;
    warmup: number;
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
  }>();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One figure per server: the median round, plus the failures of all rounds. */
const summarise = (name: string, rounds: Measurement[]): Measurement => ({
  name,
  requestsPerSecond: median(rounds.map((m) => m.requestsPerSecond)),
  p50: median(rounds.map((m) => m.p50)),
  p99: median(rounds.map((m) => m.p99)),
  cpuMicros: median(rounds.map((m) => m.cpuMicros)),
  rssMb: Math.max(...rounds.map((m) => m.rssMb)),
  non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
  errors: rounds.reduce((sum, m) => sum + m.errors, 0),
});

const QUERIES = Array.from({ length: 64 }, (_, i) => `benchmark query ${i} about agent tools`);
const BENCH_CONFIG = fileURLToPath(new URL('../fixtures/config/bench.yaml', import.meta.url));
// The spread-out gateway's tokens are minted here, so its signing secret is fixed in its config.
const BENCH_SECRET = 'bench-only-signing-secret-0123456789';

// Linux: the CPU time of a process, all its threads (the event loop, V8's GC helpers, libuv's pool), from
// the scheduler's nanosecond counters (/proc/PID/task/TID/schedstat); the 10 ms ticks of /proc/PID/stat
// where those are missing. Read from outside, so it holds whatever else shares the machine.
const TICK_MS = 10;
function cpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // no schedstat (a kernel without it): the ticks below
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
/** A process and its children (serve --workers: the primary and its workers), as Linux lists them. */
function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(children ? children.split(/\s+/).map(Number) : [])];
  } catch {
    return [pid];
  }
}
const treeCpuMs = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Target {
  name: string;
  url: string;
  pid: number;
  tokens: string[];
  stop(): Promise<unknown>;
  /** Another process whose CPU per request is reported beside the server's (Redis). */
  sidecarPid?: number;
}

async function startBare(
  mode: 'like-for-like' | 'precomputed',
  sampleFile: string,
  name: string,
  nodeArgs: string[] = [],
) {
  const script = fileURLToPath(new URL('./bench-bare-server.mjs', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, mode, sampleFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    name,
    url,
    pid: child.pid as number,
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Requests each server answered so far (warm-up included), to read its CPU profile per request. */
const answeredBy = new Map<string, number>();
const countAnswered = (name: string, n: number) => answeredBy.set(name, (answeredBy.get(name) ?? 0) + n);

/** One round of load on a target; the load is spread over its tokens, one per request in turn. */
async function load(target: Target, seconds: number): Promise<Measurement> {
  let next = 0;
  const pids = processTree(target.pid);
  const cpuBefore = treeCpuMs(pids);
  const sidecarBefore = target.sidecarPid ? cpuMs(target.sidecarPid) : 0;
  const result = await autocannon({
    url: target.url,
    connections: options.connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/web/search',
        setupRequest: (request) => {
          const n = next++;
          return {
            ...request,
            headers: {
              'content-type': 'application/json',
              'x-agent-identity': target.tokens[n % target.tokens.length] as string,
            },
            body: JSON.stringify({ query: QUERIES[n % QUERIES.length], count: 5 }),
          };
        },
      },
    ],
  });
  const cpu = treeCpuMs(pids) - cpuBefore;
  countAnswered(target.name, result.requests.total);
  const sidecar = target.sidecarPid ? cpuMs(target.sidecarPid) - sidecarBefore : 0;
  return {
    name: target.name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: result.requests.total > 0 ? (cpu * 1000) / result.requests.total : Number.NaN,
    rssMb: pids.reduce((sum, pid) => sum + rssMb(pid), 0),
    sidecarCpuMicros:
      target.sidecarPid && result.requests.total > 0 ? (sidecar * 1000) / result.requests.total : undefined,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** A gateway config with `count` verified agents (ids agent-0..., keys ak_bench_...), limits as in bench.yaml. */
function fleetConfig(dir: string, count: number): string {
  const file = join(dir, `fleet-${count}.yaml`);
  const base = readYamlFile(BENCH_CONFIG) as Record<string, unknown>;
  const agents = Array.from({ length: count }, (_, i) => ({
    id: `agent-${i}`,
    api_key: `ak_bench_${String(i).padStart(6, '0')}_${(i * 2654435761).toString(36)}`,
    tier: 'verified',
  }));
  writeFileSync(file, stringify({ ...base, identity: { signing_secret: BENCH_SECRET }, agents }));
  return file;
}

// The gateway as the package runs it: the built CLI (compiled JavaScript); the sources through tsx when
// there is no build (tsx adds a little per request, e.g. its function-name wrappers).
const ENTRY = existsSync(BUILT_CLI_ENTRY) ? BUILT_CLI_ENTRY : undefined;

async function startGateway(
  name: string,
  config: string,
  mint: (url: string) => Promise<string[]>,
  args: string[] = [],
  nodeArgs: string[] = [],
) {
  const served = await spawnServe(['--config', config, ...args], {
    entry: ENTRY,
    timeoutMs: 60_000,
    nodeArgs,
  });
  return {
    name,
    url: served.url,
    pid: served.child.pid as number,
    tokens: await mint(served.url),
    stop: () => served.stop(),
  };
}

async function mintOne(url: string): Promise<string[]> {
  const minted = await fetch(`${url}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
  });
  return [((await minted.json()) as { token: string }).token];
}

function table(rows: Measurement[]): string {
  const row = (m: Measurement) =>
    `${m.name.padEnd(30)} ${m.requestsPerSecond.toFixed(0).padStart(8)} ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(11)} ${m.rssMb.toFixed(0).padStart(7)} ${String(m.non2xx + m.errors).padStart(8)}`;
  return [
    `${'server'.padEnd(30)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/req'.padStart(11)} ${'RSS MB'.padStart(7)} ${'failed'.padStart(8)}`,
    ...rows.map(row),
  ].join('\n');
}

/** CPU time and latency of one server at the fixed rate (scheduled requests, paced within the second). */
export interface FixedRateMeasurement {
  name: string;
  rate: number;
  achievedRate: number;
  p50: number;
  p99: number;
  /** CPU time (all threads) the server spent per answered request, in microseconds. */
  cpuMicros: number;
  non2xx: number;
  errors: number;
}

/** One fixed-rate run on a target: `rate` requests per second, its CPU per request read around it. */
async function fixedRate(target: Target, rate: number, seconds: number): Promise<FixedRateMeasurement> {
  const { hostname, port } = new URL(target.url);
  const host = `${hostname}:${port}`;
  const pids = processTree(target.pid);
  const cpuBefore = treeCpuMs(pids);
  const result: PacedResult = await pacedLoad({
    url: target.url,
    rate,
    seconds,
    connections: options.rateConnections,
    request: (n) => {
      const body = JSON.stringify({ query: QUERIES[n % QUERIES.length], count: 5 });
      return Buffer.from(
        `POST /v1/web/search HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\nx-agent-identity: ${target.tokens[n % target.tokens.length]}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
  });
  const cpu = treeCpuMs(pids) - cpuBefore;
  countAnswered(target.name, result.answered);
  return {
    name: target.name,
    rate,
    achievedRate: result.achievedRate,
    p50: result.p50,
    p99: result.p99,
    cpuMicros: result.answered > 0 ? (cpu * 1000) / result.answered : Number.NaN,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

function fixedTable(rows: FixedRateMeasurement[]): string {
  const row = (m: FixedRateMeasurement) =>
    `${m.name.padEnd(30)} ${m.achievedRate.toFixed(0).padStart(8)} ${m.p50.toFixed(2).padStart(7)} ${m.p99.toFixed(2).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(11)} ${String(m.non2xx + m.errors).padStart(8)}`;
  return [
    `${'server'.padEnd(30)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/req'.padStart(11)} ${'failed'.padStart(8)}`,
    ...rows.map(row),
  ].join('\n');
}

interface Ratio {
  median: number;
  min: number;
  max: number;
}

/** Median and range of per-round ratios `figure(of) / figure(over)` (rounds paired by index). */
function perRoundRatio<M>(of: M[], over: M[], figure: (m: M) => number): Ratio {
  const values = of.map((m, i) => figure(m) / figure(over[i] as M)).filter(Number.isFinite);
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

const shown = (r: Ratio) => `${r.median.toFixed(2)} (rounds ${r.min.toFixed(2)}-${r.max.toFixed(2)})`;
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

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
    await sharedStateBenchmark(options.store);
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
      for (const target of targets) await load(target, options.warmup);
    }
    // The capacity probe the fixed rate is chosen from: saturated, after the warm-up (the 10,000-agent
    // gateway's first requests verify cold tokens, slower than it runs later).
    const capacity = new Map<string, number>();
    if (options.rate === undefined) {
      process.stderr.write(`probing each server's throughput (2 s at saturation)...\n`);
      for (const target of targets) capacity.set(target.name, (await load(target, 2)).requestsPerSecond);
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
          const m = await load(target, options.duration);
          rounds.get(target.name)?.push(m);
          saturated = `${m.requestsPerSecond.toFixed(0)} req/s, `;
        }
        const f = await fixedRate(target, rate, options.duration);
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

/** One figure per server at the fixed rate: the median round, plus the failures of all rounds. */
function summariseFixed(name: string, rate: number, rounds: FixedRateMeasurement[]): FixedRateMeasurement {
  return {
    name,
    rate,
    achievedRate: median(rounds.map((m) => m.achievedRate)),
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    cpuMicros: median(rounds.map((m) => m.cpuMicros)),
    non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
  };
}

/**
 * The shared-state run: in memory (one process), on Redis (one process), on Redis (N workers), alternating
 * rounds; then the round trip of one admission script on its own, sequentially.
 */
async function sharedStateBenchmark(url: string) {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await probe.connect();
  } catch (error) {
    probe.disconnect();
    throw new Error(
      `Cannot reach Redis at ${url} (${String(error)}): start one, e.g. redis-server --port 6379 --save ''`,
    );
  }
  const redisPid = Number(/process_id:(\d+)/.exec(await probe.info('server'))?.[1]);
  const dir = mkdtempSync(join(tmpdir(), 'agent-gateway-bench-'));
  const targets: Target[] = [];
  const configFor = (prefix: string | undefined) => {
    const file = join(dir, `${prefix ?? 'memory'}.yaml`);
    const base = readYamlFile(BENCH_CONFIG) as Record<string, unknown>;
    writeFileSync(
      file,
      stringify({
        ...base,
        ...(prefix ? { store: { url, key_prefix: `agw-bench-${prefix}-${process.pid}` } } : {}),
      }),
    );
    return file;
  };
  try {
    targets.push(await startGateway('in memory, 1 process', configFor(undefined), mintOne));
    const one = await startGateway('Redis, 1 process', configFor('one'), mintOne);
    targets.push({ ...one, sidecarPid: redisPid });
    const many = await startGateway(`Redis, ${options.workers} workers`, configFor('many'), mintOne, [
      '--workers',
      String(options.workers),
    ]);
    targets.push({ ...many, sidecarPid: redisPid });
    process.stderr.write(
      `Benchmark: ${options.connections} connections, ${options.rounds} alternating rounds of ${options.duration} s, the load generator in this process (it needs a core of its own: on a 2-core machine, 2 workers share one core with Redis and the generator).\n`,
    );
    if (options.warmup > 0) for (const target of targets) await load(target, options.warmup);
    const rounds = new Map<string, Measurement[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= options.rounds; round++) {
      for (const target of targets) rounds.get(target.name)?.push(await load(target, options.duration));
      process.stderr.write(`round ${round}/${options.rounds} done\n`);
    }
    const results = targets.map((t) => {
      const all = rounds.get(t.name) ?? [];
      const sidecar = all.map((m) => m.sidecarCpuMicros).filter((v): v is number => v !== undefined);
      return {
        ...summarise(t.name, all),
        sidecarCpuMicros: sidecar.length > 0 ? median(sidecar) : undefined,
      };
    });
    // One admission (the limits script) at a time: the Redis round trip a request waits for.
    const { connectSharedStore } = await import('../mock-server/store/shared-store.ts');
    const { loadConfig } = await import('../mock-server/config/load-config.ts');
    const config = loadConfig({ file: configFor('rtt') });
    const store = await connectSharedStore(config, () => {});
    const subject = { agentId: 'agent-verified', tier: 'verified', generation: 0 };
    const samples = 2000;
    const started = performance.now();
    for (let i = 0; i < samples; i++) {
      const decided = await store.limits.admit(
        config.rate_limits.rules,
        subject,
        'web.search',
        Date.now(),
        100_000,
      );
      if (decided.kind === 'decided' && decided.lease) store.limits.release(subject.agentId, decided.lease);
    }
    const roundTripMicros = ((performance.now() - started) * 1000) / samples;
    await store.close();
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ results, roundTripMicros }, null, 2)}\n`);
      return;
    }
    const rows = results.map(
      (m) =>
        `${m.name.padEnd(24)} ${m.requestsPerSecond.toFixed(0).padStart(8)} ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(14)} ${(m.sidecarCpuMicros?.toFixed(1) ?? '-').padStart(13)} ${String(m.non2xx + m.errors).padStart(7)}`,
    );
    const [memory, redisOne] = results as [Measurement, Measurement & { sidecarCpuMicros?: number }];
    process.stdout.write(
      `${[
        `${'gateway'.padEnd(24)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'gateway µs/req'.padStart(14)} ${'Redis µs/req'.padStart(13)} ${'failed'.padStart(7)}`,
        ...rows,
        '',
        `Redis calls per request: the admission script (the one round trip a request waits for), the lease's release and a share of the tick's journal write (neither awaited); one admission alone: ${roundTripMicros.toFixed(0)} µs (sequential, loopback, ${samples} samples)`,
        `Redis cost per request, 1 process: gateway CPU +${(redisOne.cpuMicros - memory.cpuMicros).toFixed(1)} µs, Redis CPU ${redisOne.sidecarCpuMicros?.toFixed(1) ?? '?'} µs`,
      ].join('\n')}\n`,
    );
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
    const keys = await probe.keys('agw-bench-*');
    if (keys.length > 0) await probe.del(...keys);
    probe.disconnect();
  }
}

await main();
