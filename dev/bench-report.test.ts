import { describe, expect, it } from 'vitest';
import {
  type BenchFigures,
  type BenchNames,
  isLoaded,
  loadLabel,
  ratiosOf,
  textReport,
} from './bench-report.ts';
import type { FixedRateMeasurement, Measurement } from './bench-rounds.ts';

const fixed = (name: string, cpuMicros: number, p99: number): FixedRateMeasurement => ({
  name,
  rate: 2500,
  achievedRate: 2500,
  p50: 1,
  p99,
  cpuMicros,
  non2xx: 0,
  errors: 0,
});

const names: BenchNames = {
  likeForLike: 'bare',
  precomputed: 'pre',
  gateways: ['built', 'npm start'],
  fleet: 'fleet',
  agents: 10_000,
};

function figures(load: number[]): BenchFigures {
  const rounds = (name: string, cpu: number[], p99: number[]) =>
    [name, cpu.map((c, i) => fixed(name, c, p99[i] as number))] as const;
  const fixedRounds = new Map<string, FixedRateMeasurement[]>([
    rounds('bare', [100, 100, 100], [10, 10, 10]),
    rounds('pre', [90, 90, 90], [10, 10, 10]),
    rounds('built', [200, 125, 150], [12, 30, 14]),
    rounds('npm start', [250, 250, 250], [10, 10, 10]),
    rounds('fleet', [220, 125, 150], [10, 10, 10]),
  ]);
  return {
    rate: 2500,
    rounds: 3,
    fixed: [...fixedRounds.values()].map((r) => r[0] as FixedRateMeasurement),
    fixedRounds,
    saturated: [],
    saturatedRounds: new Map(),
    load: {
      before: load[0] as number,
      start: load[1] as number,
      rounds: load.slice(2, -1),
      end: load.at(-1) as number,
    },
  };
}

describe('the benchmark report', () => {
  it('takes each ratio round by round and reports the median with its range', () => {
    const ratios = ratiosOf(names, figures([0.2, 0.3, 0.3, 0.3, 0.4]));
    const [built, npmStart] = ratios.gateways;
    // bare / gateway per round: 0.5, 0.8, 0.667.
    expect(built?.bare_over_gateway_cpu.median).toBeCloseTo(2 / 3);
    expect(built?.bare_over_gateway_cpu.min).toBeCloseTo(0.5);
    expect(built?.bare_over_gateway_cpu.max).toBeCloseTo(0.8);
    expect(built?.p99_gateway_over_bare.median).toBeCloseTo(1.4);
    expect(npmStart?.bare_over_gateway_cpu.median).toBeCloseTo(0.4);
    // fleet / single per round: 1.1, 1, 1.
    expect(ratios.fleet_over_single_cpu?.median).toBeCloseTo(1);
  });

  it('labels a run by the load average read before it began, not by the load its own rounds add', () => {
    // Its own rounds lift the 1-minute average past 1 on a quiet machine: still quiet.
    const quiet = figures([0.2, 0.5, 1.9, 1.4, 1.3]);
    const loaded = figures([1.2, 0.5, 0.9, 0.4, 0.3]);
    expect(isLoaded(quiet.load)).toBe(false);
    expect(isLoaded(loaded.load)).toBe(true);
    expect(loadLabel(loaded.load)).toBe(
      'load average 1.20 before the run, LOADED (0.30-0.90 during it, its own load included)',
    );
    // Without a reading from before (a run that is all its own work), any sample at or above 1.
    expect(loadLabel({ start: 0.2, rounds: [1.2], end: 0.3 })).toBe('load average 0.20-1.20, LOADED');
    const quietText = textReport(names, quiet, 50);
    const loadedText = textReport(names, loaded, 50);
    expect(quietText).toContain(
      'target >= 0.65: met [load average 0.20 before the run, quiet (0.50-1.90 during it, its own load included)]',
    );
    expect(quietText).toContain('npm start, CPU per request at 2500 req/s (bare µs / gateway µs): 0.40');
    expect(quietText).not.toContain('LOADED');
    expect(loadedText).toContain('target >= 0.65: met in this run (loaded: not shown either way)');
    expect(loadedText).toContain('LOADED run');
  });

  it("prints the bytes each server allocates per request, and each gateway's beyond the bare server's", () => {
    const run = figures([0.2, 0.5, 0.9, 0.4, 0.3]);
    const bytes: Record<string, number> = { bare: 10 * 1024, built: 26.5 * 1024, fleet: 30 * 1024 };
    run.fixed = run.fixed.map((m) => ({ ...m, allocatedBytes: bytes[m.name] }));
    const text = textReport(names, run, 50);
    expect(text).toMatch(/bare +2500 +1\.00 +10\.00 +100\.0 +10\.0 +0/);
    expect(text).toContain('HTTP included): bare 10.0 KB');
    expect(text).toContain('  built: 26.5 KB, 16.5 KB more than bare');
    expect(text).toContain('  fleet: 30.0 KB, 20.0 KB more than bare');
    expect(text).not.toContain('  npm start:');
  });

  it('labels the saturated phase by the same reading from before the run, its own rounds beside', () => {
    const run = figures([0.2, 0.5, 0.9, 0.4, 0.3]);
    const saturated: Measurement = {
      name: 'bare',
      requestsPerSecond: 9000,
      p50: 1,
      p99: 2,
      cpuMicros: 30,
      rssMb: 60,
      non2xx: 0,
      errors: 0,
    };
    run.saturated = [saturated];
    run.saturatedLoad = { before: 0.2, start: 0.3, rounds: [1.4, 1.8], end: 2.1 };
    const text = textReport(names, run, 50);
    expect(text).not.toContain('LOADED');
    expect(text).toContain(
      'Saturated (50 connections, autocannon; the load generator shares the machine; load average 0.20 before the run, quiet (0.30-2.10 during it, its own load included))',
    );
  });
});
