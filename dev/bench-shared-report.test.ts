import { describe, expect, it } from 'vitest';
import type { LoadSamples } from './bench-report.ts';
import {
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
});
