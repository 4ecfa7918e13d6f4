import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import SlowFirstSequencer, { machineLoad, SLOW_FIRST, slowFirst, testWorkers } from './test-schedule.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A test specification as the sequencer reads it: its file and its project's settings. */
const spec = (file: string) =>
  ({
    moduleId: join(ROOT, file),
    project: { name: '', config: { root: ROOT, isolate: true, sequence: { groupOrder: 0 } } },
  }) as unknown as TestSpecification;

const sequencer = (cached: (file: string) => { duration: number; failed: boolean } | undefined) =>
  new SlowFirstSequencer({
    config: { root: ROOT },
    cache: { getTestSpecificationResult: (s: TestSpecification) => cached(s.moduleId) },
  } as unknown as Vitest);

describe("vitest's schedule", () => {
  it('runs twice as many files as cores on a quiet machine, cores - 1 (at least 2) on a busy one', () => {
    expect(testWorkers(2, 0)).toBe(4);
    expect(testWorkers(2, 0.9)).toBe(4);
    expect(testWorkers(2, 1)).toBe(2);
    expect(testWorkers(2, 20)).toBe(2);
    expect(testWorkers(8, 3)).toBe(16);
    expect(testWorkers(8, 12)).toBe(7);
  });

  it("goes by the load npm test measured before its own stages began, else by the machine's load now", () => {
    const now = () => 3.5;
    expect(machineLoad({ AGENT_GATEWAY_MACHINE_LOAD: '0.40' }, now)).toBe(0.4);
    expect(machineLoad({ AGENT_GATEWAY_MACHINE_LOAD: '0' }, now)).toBe(0);
    expect(machineLoad({}, now)).toBe(3.5);
    for (const bad of ['', ' ', 'busy', '-1', 'NaN', 'Infinity'])
      expect(machineLoad({ AGENT_GATEWAY_MACHINE_LOAD: bad }, now), bad).toBe(3.5);
    // Beside its own lanes a quiet machine's run keeps the quiet machine's pool.
    expect(
      testWorkers(
        2,
        machineLoad({ AGENT_GATEWAY_MACHINE_LOAD: '0.2' }, () => 2.4),
      ),
    ).toBe(4);
  });

  it('puts the slow files first, in the listed order, and keeps the order of the rest', () => {
    const files = [
      'mock-server/a.test.ts',
      'test/suite-proof-valid.test.ts',
      'test/b.test.ts',
      'test/client-report-differential.test.ts',
      'test/suite-proof-faulty.test.ts',
    ];
    expect(slowFirst(files, (f) => f)).toEqual([
      'test/client-report-differential.test.ts',
      'test/suite-proof-valid.test.ts',
      'test/suite-proof-faulty.test.ts',
      'mock-server/a.test.ts',
      'test/b.test.ts',
    ]);
  });

  it('names only test files that exist, each pattern at least one', () => {
    const tests = readdirSync(join(ROOT, 'test')).map((name) => `test/${name}`);
    for (const pattern of SLOW_FIRST)
      expect(
        tests.filter((f) => pattern.test(f)),
        String(pattern),
      ).not.toEqual([]);
  });

  it('starts the slow files first on a fresh clone (no cached results), where vitest would start the largest', async () => {
    const files = ['test/cli.test.ts', 'test/suite-proof-valid.test.ts', 'test/container-image.test.ts'];
    const sorted = await sequencer(() => undefined).sort(files.map(spec));
    expect(sorted.map((s) => s.moduleId)).toEqual(
      ['test/container-image.test.ts', 'test/suite-proof-valid.test.ts', 'test/cli.test.ts'].map((f) =>
        join(ROOT, f),
      ),
    );
  });

  it("keeps vitest's own order (failed first, then longest) when every file has a cached result", async () => {
    const durations: Record<string, number> = {
      'test/cli.test.ts': 90_000,
      'test/suite-proof-valid.test.ts': 10_000,
      'test/container-image.test.ts': 50_000,
    };
    const files = Object.keys(durations);
    const sorted = await sequencer((id) => ({
      duration: durations[id.slice(ROOT.length)] as number,
      failed: false,
    })).sort(files.map(spec));
    expect(sorted.map((s) => s.moduleId.slice(ROOT.length))).toEqual([
      'test/cli.test.ts',
      'test/container-image.test.ts',
      'test/suite-proof-valid.test.ts',
    ]);
  });
});
