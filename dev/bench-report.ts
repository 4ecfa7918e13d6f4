import { cpus, loadavg, platform, release } from 'node:os';
import {
  type FixedRateMeasurement,
  fixedTable,
  kilobytes,
  type Measurement,
  perRoundRatio,
  type Ratio,
  shown,
  table,
  verdict,
} from './bench-rounds.ts';

/* What `npm run bench` prints: the figures (CPU per request at a fixed rate, bare / gateway for each
 * way of running the gateway, p99, 10,000 agents / 1 agent), each with the machine's load average beside it. */

/**
 * The machine's 1-minute load average: `before`, read before the run started any work of its own (a server,
 * Redis, the load generator), and the samples at the start of a phase, before each round and at its end
 * (the run's own load included: a saturated round alone lifts it by about the cores it keeps busy).
 */
export interface LoadSamples {
  /** Read before the run's own work: what the rest of the machine was doing. A run is labelled by it. */
  before?: number;
  start: number;
  rounds: number[];
  end: number;
}

/** At or above this 1-minute load average a run is labelled loaded: its figures compare, they do not judge. */
export const LOADED_AT = 1;

export const sampleLoad = () => loadavg()[0] as number;

const all = (load: LoadSamples) => [load.start, ...load.rounds, load.end].filter((v) => !Number.isNaN(v));

/**
 * A run is loaded when the machine was busy before it began (`before`): its own rounds lift the 1-minute
 * average too, so they cannot tell a busy machine from a busy benchmark. Without `before` (a run that is
 * all its own work, as the test stages' timing), any sample at or above the threshold.
 */
export const isLoaded = (load: LoadSamples) => (load.before ?? Math.max(...all(load))) >= LOADED_AT;

/**
 * `load average 0.42 before the run, quiet (0.80-2.10 during it, its own load included)`, or, without
 * `before`, `load average 9.80-12.10, LOADED` (the 1-minute figure's range).
 */
export function loadLabel(load: LoadSamples): string {
  const values = all(load);
  const range = `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
  const verdict = isLoaded(load) ? 'LOADED' : 'quiet';
  if (load.before === undefined) return `load average ${range}, ${verdict}`;
  return `load average ${load.before.toFixed(2)} before the run, ${verdict} (${range} during it, its own load included)`;
}

export function machineLine(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, ${platform()} ${release()}`;
}

/** The names of the servers of a run, in the order bench.ts starts them. */
export interface BenchNames {
  likeForLike: string;
  precomputed: string;
  /** The gateway, one agent, one per way of running it (built CLI, `npm start`). */
  gateways: string[];
  /** The gateway with many agents (the first way of running it). */
  fleet?: string;
  agents: number;
}

export interface BenchFigures {
  rate: number;
  rounds: number;
  fixed: FixedRateMeasurement[];
  fixedRounds: Map<string, FixedRateMeasurement[]>;
  saturated: Measurement[];
  saturatedRounds: Map<string, Measurement[]>;
  /** The fixed-rate phase's load (the targets are judged on it). */
  load: LoadSamples;
  /** The saturated phase's load (it runs after every fixed-rate round, so it cannot lift theirs). */
  saturatedLoad?: LoadSamples;
}

/** CPU per request compared as efficiency: bare µs / gateway µs (1 = as cheap as the bare server). */
const efficiency = (m: { cpuMicros: number }) => 1 / m.cpuMicros;

/** The per-round ratios the targets are judged on, keyed by figure and server. */
export function ratiosOf(names: BenchNames, figures: BenchFigures) {
  const fixedOf = (name: string) => figures.fixedRounds.get(name) ?? [];
  const roundsOf = (name: string) => figures.saturatedRounds.get(name) ?? [];
  const bare = fixedOf(names.likeForLike);
  const gateways = names.gateways.map((name) => ({
    name,
    bare_over_gateway_cpu: perRoundRatio(fixedOf(name), bare, efficiency),
    p99_gateway_over_bare: perRoundRatio(fixedOf(name), bare, (m) => m.p99),
    ...(figures.saturated.length > 0
      ? {
          saturated_req_s_gateway_over_bare: perRoundRatio(
            roundsOf(name),
            roundsOf(names.likeForLike),
            (m) => m.requestsPerSecond,
          ),
        }
      : {}),
  }));
  const single = names.gateways[0] as string;
  const fleet = names.fleet
    ? perRoundRatio(fixedOf(names.fleet), fixedOf(single), (m) => m.cpuMicros)
    : undefined;
  return { fixed_rate: figures.rate, gateways, fleet_over_single_cpu: fleet };
}

/** A target's verdict, said only of a quiet run (a loaded run's figures do not show a target either way). */
const judged = (ok: boolean, loaded: boolean) =>
  loaded ? `${verdict(ok)} in this run (loaded: not shown either way)` : verdict(ok);

/** The text report: the fixed-rate table and the targets, then the saturated table. */
export function textReport(names: BenchNames, figures: BenchFigures, connections: number): string {
  const ratios = ratiosOf(names, figures);
  const loaded = isLoaded(figures.load);
  const rate = figures.rate;
  const label = loadLabel(figures.load);
  const lines = [
    `Machine: ${machineLine()}; ${label}`,
    ...(loaded
      ? [
          `LOADED run (1-minute load average >= ${LOADED_AT} on ${cpus().length} cores before it began): the figures compare the servers within this run; they show no target either way.`,
        ]
      : []),
    '',
    `At a fixed ${rate} req/s (median of ${figures.rounds} alternating rounds; ${label}):`,
    fixedTable(figures.fixed),
    ...allocationLines(names, figures.fixed),
    '',
  ];
  for (const g of ratios.gateways) {
    lines.push(
      `bare like-for-like / ${g.name}, CPU per request at ${rate} req/s (bare µs / gateway µs): ${shown(g.bare_over_gateway_cpu)}; target >= 0.65: ${judged(g.bare_over_gateway_cpu.median >= 0.65, loaded)} [${label}]`,
      `${g.name} p99 / bare like-for-like p99 at ${rate} req/s: ${shown(g.p99_gateway_over_bare)}; target <= 1.5: ${judged(g.p99_gateway_over_bare.median <= 1.5, loaded)} [${label}]`,
    );
  }
  if (ratios.fleet_over_single_cpu)
    lines.push(
      `${names.agents} agents / 1 agent (${names.gateways[0]}), CPU per request at ${rate} req/s: ${shown(ratios.fleet_over_single_cpu)}; target <= 1.10: ${judged(ratios.fleet_over_single_cpu.median <= 1.1, loaded)} [${label}]`,
    );
  const slow = figures.fixed.filter((m) => m.achievedRate < rate * 0.97);
  if (slow.length > 0)
    lines.push(
      `${slow.map((m) => m.name).join(', ')} fell behind the fixed rate: its figures are saturated ones; pick a lower --rate.`,
    );
  if (figures.saturated.length > 0) {
    lines.push(
      '',
      `Saturated (${connections} connections, autocannon; the load generator shares the machine; ${loadLabel(figures.saturatedLoad ?? figures.load)}):`,
      table(figures.saturated),
    );
    for (const g of ratios.gateways)
      if (g.saturated_req_s_gateway_over_bare)
        lines.push(
          `${g.name} / bare like-for-like, req/s: ${shown(g.saturated_req_s_gateway_over_bare as Ratio)}`,
        );
  }
  return lines.join('\n');
}

/**
 * What each gateway allocates per request beside the bare like-for-like server (both through node:http, so
 * the difference is the gateway's own), from their collections' lines (`node --trace-gc-nvp`).
 */
function allocationLines(names: BenchNames, fixed: FixedRateMeasurement[]): string[] {
  const bare = fixed.find((m) => m.name === names.likeForLike)?.allocatedBytes;
  if (bare === undefined) return [];
  const lines = [
    `Bytes allocated per request (the collections' allocated= of node --trace-gc-nvp over the requests answered, HTTP included): ${names.likeForLike} ${kilobytes(bare)} KB`,
  ];
  for (const name of [...names.gateways, ...(names.fleet ? [names.fleet] : [])]) {
    const bytes = fixed.find((m) => m.name === name)?.allocatedBytes;
    if (bytes !== undefined)
      lines.push(`  ${name}: ${kilobytes(bytes)} KB, ${kilobytes(bytes - bare)} KB more than bare`);
  }
  return lines;
}

/** The same figures as JSON (every round kept). */
export function jsonReport(names: BenchNames, figures: BenchFigures): string {
  return JSON.stringify(
    {
      machine: machineLine(),
      load_average: figures.load,
      loaded: isLoaded(figures.load),
      ...(figures.saturatedLoad ? { saturated_load_average: figures.saturatedLoad } : {}),
      rate: figures.rate,
      fixed: figures.fixed,
      saturated: figures.saturated,
      ratios: ratiosOf(names, figures),
      fixed_rounds: Object.fromEntries(figures.fixedRounds),
      rounds: Object.fromEntries(figures.saturatedRounds),
    },
    null,
    2,
  );
}
