import autocannon from 'autocannon';
import { type PacedResult, pacedLoad } from './bench-load.ts';
import { cpuMs, processTree, rssMb, type Target, treeCpuMs } from './bench-targets.ts';
import { allocationSince } from './gc-trace.ts';

/* Rounds of load on a target and the figures they give: saturated (autocannon) and at a fixed rate. */

export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** CPU time (user + system) the server process spent per answered request, in microseconds. */
  cpuMicros: number;
  /** Requests the round answered (what the per-request figures are divided by). */
  answered?: number;
  /** Resident memory of the server process (and its workers) after the round, in MB. */
  rssMb: number;
  /** CPU time Redis spent per answered request, in microseconds (shared-state runs). */
  sidecarCpuMicros?: number;
  /** CPU time the load generator (this process) spent per answered request, in microseconds. */
  generatorCpuMicros?: number;
  non2xx: number;
  errors: number;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One figure per server: the median round, plus the failures of all rounds. */
export const summarise = (name: string, rounds: Measurement[]): Measurement => ({
  name,
  requestsPerSecond: median(rounds.map((m) => m.requestsPerSecond)),
  p50: median(rounds.map((m) => m.p50)),
  p99: median(rounds.map((m) => m.p99)),
  cpuMicros: median(rounds.map((m) => m.cpuMicros)),
  rssMb: Math.max(...rounds.map((m) => m.rssMb)),
  non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
  errors: rounds.reduce((sum, m) => sum + m.errors, 0),
});

export const QUERIES = Array.from({ length: 64 }, (_, i) => `benchmark query ${i} about agent tools`);

/** Requests each server answered so far (warm-up included), to read its CPU profile per request. */
export const answeredBy = new Map<string, number>();
const countAnswered = (name: string, n: number) => answeredBy.set(name, (answeredBy.get(name) ?? 0) + n);

/** One round of load on a target; the load is spread over its tokens, one per request in turn. */
export async function load(target: Target, seconds: number, connections: number): Promise<Measurement> {
  let next = 0;
  const pids = processTree(target.pid);
  const cpuBefore = treeCpuMs(pids);
  const sidecarBefore = target.sidecarPid ? cpuMs(target.sidecarPid) : 0;
  const generatorBefore = process.cpuUsage();
  const result = await autocannon({
    url: target.url,
    connections: connections,
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
  const generator = process.cpuUsage(generatorBefore);
  const cpu = treeCpuMs(pids) - cpuBefore;
  countAnswered(target.name, result.requests.total);
  const sidecar = target.sidecarPid ? cpuMs(target.sidecarPid) - sidecarBefore : 0;
  return {
    name: target.name,
    requestsPerSecond: result.requests.average,
    answered: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: result.requests.total > 0 ? (cpu * 1000) / result.requests.total : Number.NaN,
    rssMb: pids.reduce((sum, pid) => sum + rssMb(pid), 0),
    sidecarCpuMicros:
      target.sidecarPid && result.requests.total > 0 ? (sidecar * 1000) / result.requests.total : undefined,
    generatorCpuMicros:
      result.requests.total > 0 ? (generator.user + generator.system) / result.requests.total : Number.NaN,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function table(rows: Measurement[]): string {
  const row = (m: Measurement) =>
    `${m.name.padEnd(34)} ${m.requestsPerSecond.toFixed(0).padStart(8)} ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(11)} ${m.rssMb.toFixed(0).padStart(7)} ${String(m.non2xx + m.errors).padStart(8)}`;
  return [
    `${'server'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/req'.padStart(11)} ${'RSS MB'.padStart(7)} ${'failed'.padStart(8)}`,
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
  /** Bytes the server allocated per answered request, when it runs under `TRACE_GC` (gc-trace.ts). */
  allocatedBytes?: number;
  non2xx: number;
  errors: number;
}

/** One fixed-rate run on a target: `rate` requests per second, its CPU per request read around it. */
export async function fixedRate(
  target: Target,
  rate: number,
  seconds: number,
  connections: number,
): Promise<FixedRateMeasurement> {
  const { hostname, port } = new URL(target.url);
  const host = `${hostname}:${port}`;
  const pids = processTree(target.pid);
  const allocation = target.output ? allocationSince(target.output) : undefined;
  const cpuBefore = treeCpuMs(pids);
  const result: PacedResult = await pacedLoad({
    url: target.url,
    rate,
    seconds,
    connections: connections,
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
    allocatedBytes: allocation?.(result.answered),
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Bytes as kilobytes with one decimal, `-` when not measured. */
export const kilobytes = (bytes: number | undefined) =>
  bytes === undefined || Number.isNaN(bytes) ? '-' : (bytes / 1024).toFixed(1);

export function fixedTable(rows: FixedRateMeasurement[]): string {
  const row = (m: FixedRateMeasurement) =>
    `${m.name.padEnd(34)} ${m.achievedRate.toFixed(0).padStart(8)} ${m.p50.toFixed(2).padStart(7)} ${m.p99.toFixed(2).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(11)} ${kilobytes(m.allocatedBytes).padStart(11)} ${String(m.non2xx + m.errors).padStart(8)}`;
  return [
    `${'server'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/req'.padStart(11)} ${'KB alloc/req'.padStart(11)} ${'failed'.padStart(8)}`,
    ...rows.map(row),
  ].join('\n');
}

export interface Ratio {
  median: number;
  min: number;
  max: number;
}

/** Median and range of per-round ratios `figure(of) / figure(over)` (rounds paired by index). */
export function perRoundRatio<M>(of: M[], over: M[], figure: (m: M) => number): Ratio {
  const values = of.map((m, i) => figure(m) / figure(over[i] as M)).filter(Number.isFinite);
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export const shown = (r: Ratio) => `${r.median.toFixed(2)} (rounds ${r.min.toFixed(2)}-${r.max.toFixed(2)})`;
export const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** One figure per server at the fixed rate: the median round, plus the failures of all rounds. */
export function summariseFixed(
  name: string,
  rate: number,
  rounds: FixedRateMeasurement[],
): FixedRateMeasurement {
  return {
    name,
    rate,
    achievedRate: median(rounds.map((m) => m.achievedRate)),
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    cpuMicros: median(rounds.map((m) => m.cpuMicros)),
    ...(rounds.length > 0 && rounds.every((m) => m.allocatedBytes !== undefined)
      ? { allocatedBytes: median(rounds.map((m) => m.allocatedBytes as number)) }
      : {}),
    non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
  };
}
