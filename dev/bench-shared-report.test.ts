import { describe, expect, it } from 'vitest';
import type { LoadSamples } from './bench-report.ts';
import {
  budgetLines,
  callsPerRequest,
  commandCalls,
  type SharedNames,
  type SharedRound,
  sharedRatios,
  sharedReport,
} from './bench-shared-report.ts';

const INFO_BEFORE = [
  '# Commandstats',
  'cmdstat_evalsha:calls=100,usec=5000,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
  'cmdstat_get:calls=40,usec=10,usec_per_call=0.25,rejected_calls=0,failed_calls=0',
  'cmdstat_config|resetstat:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0',
].join('\r\n');
const INFO_AFTER = [
  '# Commandstats',
  'cmdstat_evalsha:calls=1100,usec=55000,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
  'cmdstat_get:calls=2040,usec=510,usec_per_call=0.25,rejected_calls=0,failed_calls=0',
  'cmdstat_xadd:calls=1000,usec=900,usec_per_call=0.90,rejected_calls=0,failed_calls=0',
  'cmdstat_config|resetstat:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0',
].join('\r\n');

const round = (name: string, rps: number, cpu: number, redis?: number): SharedRound => ({
  name,
  requestsPerSecond: rps,
  p50: 1,
  p99: 5,
  cpuMicros: cpu,
  rssMb: 50,
  ...(redis === undefined ? {} : { sidecarCpuMicros: redis }),
  non2xx: 0,
  errors: 0,
});

const names: SharedNames = {
  bare: 'bare',
  memory: 'memory',
  redisOne: 'redis one',
  workers: 'workers',
  workerCount: 2,
};

describe('the shared-state benchmark figures', () => {
  it('counts each command per request between two INFO commandstats readings, new commands included', () => {
    const rows = callsPerRequest(commandCalls(INFO_BEFORE), commandCalls(INFO_AFTER), 1000);
    expect(rows).toEqual([
      ['get', 2],
      ['evalsha', 1],
      ['xadd', 1],
    ]);
  });

  it('judges workers against one in-memory process round by round, Redis CPU counted', () => {
    const rounds = new Map<string, SharedRound[]>([
      ['bare', [round('bare', 9000, 40), round('bare', 9000, 40), round('bare', 9000, 40)]],
      ['memory', [round('memory', 4000, 100), round('memory', 5000, 100), round('memory', 4000, 80)]],
      ['redis one', [round('redis one', 3000, 150, 30)]],
      [
        'workers',
        [round('workers', 5000, 100, 20), round('workers', 5000, 110, 20), round('workers', 6000, 86, 10)],
      ],
    ]);
    const ratios = sharedRatios(names, rounds);
    expect(ratios.throughput).toEqual({ median: 1.25, min: 1, max: 1.5 });
    expect(ratios.cpu.median).toBeCloseTo(1.2);
    expect(ratios.cpu.max).toBeCloseTo(1.3);
    // Quiet before the run began; its own saturated rounds lift the load average, which judges nothing.
    const quiet: LoadSamples = { before: 0.2, start: 0.2, rounds: [0.3, 1.4, 1.5], end: 1.5 };
    const text = sharedReport(names, rounds, quiet, 50, 120);
    expect(text).toContain('| workers / in memory, req/s | **1.25 (rounds 1.00-1.50)** | >= 1.2: met |');
    expect(text).toContain(
      '| the same, CPU per request (Redis included) | **1.20 (rounds 1.20-1.30)** | <= 1.3: met |',
    );
    // A loaded machine compares the servers, it judges no target.
    const loaded = sharedReport(names, rounds, { ...quiet, before: 4 }, 50, 120);
    expect(loaded).not.toContain(': met');
    expect(loaded).toContain('LOADED run: compares, judges no target');
  });

  it("prints the cores' CPU budget with the load generator's share, and whether 1.2x in memory fits in it", () => {
    const withGenerator = (m: SharedRound) => ({ ...m, generatorCpuMicros: 100 });
    const rounds = new Map<string, SharedRound[]>([
      ['bare', [withGenerator(round('bare', 20000, 40))]],
      ['memory', [withGenerator(round('memory', 10000, 100))]],
      ['redis one', [withGenerator(round('redis one', 5000, 200, 50))]],
      ['workers', [withGenerator(round('workers', 6000, 200, 50))]],
    ]);
    const lines = budgetLines(names, rounds, 2).join('\n');
    // 2,000,000 / (100 + 100) = 10,000; / (250 + 100) = 5,714.
    expect(lines).toContain('it spends 100 µs a request');
    expect(lines).toContain('  memory: 10000 req/s (measured 10000)');
    expect(lines).toContain('  workers: 5714 req/s (measured 6000)');
    // 1.2 × 10,000 = 12,000 req/s: 2,000,000 / 12,000 − 100 = 67 µs, below in memory's 100.
    expect(lines).toContain('1.2x in memory (12000 req/s) leaves 67 µs');
    expect(lines).toContain('out of reach on these cores');
    // On 8 cores the same figures leave room: 8,000,000 / 12,000 − 100 = 567 µs.
    expect(budgetLines(names, rounds, 8).join('\n')).toContain('leaves 567 µs a request');
    expect(budgetLines(names, rounds, 8).join('\n')).toContain('within reach');
    // Rounds that did not measure the generator: no budget.
    expect(budgetLines(names, new Map([['memory', [round('memory', 1, 1)]]]), 2)).toEqual([]);
  });
});
