import { cpus } from 'node:os';
import { isLoaded, type LoadSamples, loadLabel } from './bench-report.ts';
import { type Measurement, median, perRoundRatio, shown, verdict } from './bench-rounds.ts';

/* The figures of `npm run bench -- --store`: Redis commands per request (INFO commandstats read around each
 * round), the ratios the shared-state targets are judged on, and the report as text. */

/** Calls per command, from `INFO commandstats` (`cmdstat_evalsha:calls=12,usec=...`). */
export function commandCalls(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(match[1] as string, Number(match[2]));
  return calls;
}

/** Calls of each command between two readings, per request answered, largest first (none below 0.005). */
export function callsPerRequest(
  before: Map<string, number>,
  after: Map<string, number>,
  requests: number,
): [command: string, perRequest: number][] {
  const rows: [string, number][] = [];
  for (const [command, calls] of after) {
    const perRequest = (calls - (before.get(command) ?? 0)) / requests;
    if (perRequest >= 0.005) rows.push([command, perRequest]);
  }
  return rows.sort((a, b) => b[1] - a[1]);
}

/** A shared-state round of one server: the load's figures, and Redis's commands per request in it. */
export interface SharedRound extends Measurement {
  commands?: [string, number][];
}

/** Calls of the scripts (EVALSHA, EVAL): the round trips a request makes, as scripts. */
const scriptCalls = (rows: [string, number][]) =>
  rows.filter(([c]) => c === 'evalsha' || c === 'eval').reduce((sum, [, n]) => sum + n, 0);

/** What a request costs in CPU, all processes counted: the server's (workers included) and Redis's. */
const totalCpu = (m: Measurement) => m.cpuMicros + (m.sidecarCpuMicros ?? 0);

export interface SharedNames {
  bare: string;
  memory: string;
  redisOne: string;
  workers: string;
  workerCount: number;
}

/** Round by round: workers / one in-memory process, by req/s and by CPU per request (Redis included). */
export function sharedRatios(names: SharedNames, rounds: Map<string, SharedRound[]>) {
  const of = (name: string) => rounds.get(name) ?? [];
  const throughput = perRoundRatio(of(names.workers), of(names.memory), (m) => m.requestsPerSecond);
  const cpu = perRoundRatio(of(names.workers), of(names.memory), totalCpu);
  const bare = perRoundRatio(of(names.bare), of(names.memory), (m) => m.cpuMicros);
  return { throughput, cpu, bare };
}

const column = (text: string, width: number) => text.padStart(width);

/** The table of the issue (server, req/s, CPU per request), with Redis's share and the load beside it. */
export function sharedReport(
  names: SharedNames,
  rounds: Map<string, SharedRound[]>,
  load: LoadSamples,
  connections: number,
  roundTripMicros: number,
  cores = cpus().length,
): string {
  const lines: string[] = [
    `Saturated, ${connections} connections, authenticated POST /v1/web/search, medians of ${rounds.get(names.memory)?.length ?? 0} alternating rounds (${loadLabel(load)}; per round: ${load.rounds.map((l) => l.toFixed(2)).join(', ')}):`,
    `${'server'.padEnd(34)}${column('req/s', 8)}${column('p99 ms', 8)}${column('server µs/req', 15)}${column('Redis µs/req', 14)}${column('total µs/req', 14)}${column('failed', 8)}`,
  ];
  for (const [name, all] of rounds) {
    const req = median(all.map((m) => m.requestsPerSecond));
    const p99 = median(all.map((m) => m.p99));
    const cpu = median(all.map((m) => m.cpuMicros));
    const sidecar = all.map((m) => m.sidecarCpuMicros).filter((v): v is number => v !== undefined);
    const redis = sidecar.length > 0 ? median(sidecar) : undefined;
    const total = median(all.map(totalCpu));
    const failed = all.reduce((sum, m) => sum + m.non2xx + m.errors, 0);
    lines.push(
      `${name.padEnd(34)}${column(req.toFixed(0), 8)}${column(String(p99), 8)}${column(cpu.toFixed(1), 15)}${column(redis?.toFixed(1) ?? '-', 14)}${column(total.toFixed(1), 14)}${column(String(failed), 8)}`,
    );
  }
  const ratios = sharedRatios(names, rounds);
  const loaded = isLoaded(load);
  const judged = (ok: boolean) => (loaded ? 'LOADED run: compares, judges no target' : verdict(ok));
  lines.push(
    '',
    `| figure | value (rounds) | target |`,
    `|---|---|---|`,
    `| ${names.workers} / in memory, req/s | **${shown(ratios.throughput)}** | >= 1.2: ${judged(ratios.throughput.median >= 1.2)} |`,
    `| the same, CPU per request (Redis included) | **${shown(ratios.cpu)}** | <= 1.3: ${judged(ratios.cpu.median <= 1.3)} |`,
    `| bare / in memory, CPU per request (saturated) | ${shown(ratios.bare)} | |`,
    '',
    'Redis commands per request (INFO commandstats around each round, commands run inside scripts included; median round):',
  );
  for (const name of [names.redisOne, names.workers]) {
    const all = rounds.get(name) ?? [];
    const withCommands = all.filter((m) => m.commands);
    if (withCommands.length === 0) continue;
    const middle = withCommands.sort((a, b) => scriptCalls(a.commands ?? []) - scriptCalls(b.commands ?? []))[
      Math.floor(withCommands.length / 2)
    ] as SharedRound;
    const rows = middle.commands ?? [];
    const total = rows.reduce((sum, [, n]) => sum + n, 0);
    lines.push(
      `  ${name}: ${total.toFixed(2)} commands, of them ${scriptCalls(rows).toFixed(2)} script calls (EVALSHA): ${rows.map(([c, n]) => `${c} ${n.toFixed(2)}`).join(', ')}`,
    );
  }
  lines.push(
    `One admission alone (the round trip a request waits for): ${roundTripMicros.toFixed(0)} µs (sequential, loopback).`,
    ...budgetLines(names, rounds, cores),
  );
  return lines.join('\n');
}

/**
 * The CPU budget of the run's cores, which the load generator shares: a request costs the server, Redis
 * and the generator, so the cores serve at most cores × 1,000,000 / (their sum) req/s; and what 1.2x the
 * in-memory process's req/s would leave the server and Redis per request, beside what the in-memory process
 * spends alone (a shared store costs more than none: below it, the target is out of reach on these cores).
 */
export function budgetLines(names: SharedNames, rounds: Map<string, SharedRound[]>, cores: number): string[] {
  const all = [...rounds.values()].flat();
  const generated = all.map((m) => m.generatorCpuMicros).filter((v): v is number => Number.isFinite(v));
  if (generated.length === 0) return [];
  const generator = median(generated);
  const medianOf = (name: string, figure: (m: SharedRound) => number) =>
    median((rounds.get(name) ?? []).map(figure));
  const ceiling = (name: string) => (cores * 1_000_000) / (medianOf(name, totalCpu) + generator);
  const memoryRate = medianOf(names.memory, (m) => m.requestsPerSecond);
  const memoryCpu = medianOf(names.memory, totalCpu);
  const target = 1.2 * memoryRate;
  const left = (cores * 1_000_000) / target - generator;
  const servers = [names.bare, names.memory, names.redisOne, names.workers];
  return [
    '',
    `CPU budget of ${cores} cores, the load generator on them: it spends ${generator.toFixed(0)} µs a request (this process, median round), so a server can answer at most ${cores} × 1,000,000 / (server + Redis + generator µs) req/s:`,
    ...servers.map(
      (name) =>
        `  ${name}: ${ceiling(name).toFixed(0)} req/s (measured ${medianOf(name, (m) => m.requestsPerSecond).toFixed(0)})`,
    ),
    `1.2x in memory (${target.toFixed(0)} req/s) leaves ${left.toFixed(0)} µs a request for the server and Redis together; in memory alone spends ${memoryCpu.toFixed(0)} µs: ${left < memoryCpu ? 'out of reach on these cores whatever the shared state costs (it cannot cost less than none)' : 'within reach if the shared state costs less than the difference'}.`,
  ];
}
