import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import FileTimesReporter from './file-times-reporter.ts';
import { fileTable, fileTimes, loadsDuring } from './test-times.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const samples = [
  { at: 1000, load: 0.5 },
  { at: 6000, load: 2 },
  { at: 11000, load: 9 },
];

describe('npm run test:times', () => {
  it('reads the load while a file ran, with the sample just before it', () => {
    expect(loadsDuring(samples, 5000, 12000)).toEqual([0.5, 2, 9]);
    expect(loadsDuring(samples, 6500, 7000)).toEqual([2]);
    expect(loadsDuring(samples, 0, 500)).toEqual([]);
  });

  it("lists vitest's files slowest first, with their time, load and any failure", () => {
    const report = JSON.stringify([
      { file: `${ROOT}test/quick.test.ts`, startTime: 6500, endTime: 7000, state: 'passed' },
      { file: `${ROOT}test/slow.test.ts`, startTime: 1500, endTime: 11500, state: 'failed' },
    ]);
    const files = fileTimes(report, samples);
    expect(files.map((f) => [f.file, f.seconds])).toEqual([
      ['test/slow.test.ts', 10],
      ['test/quick.test.ts', 0.5],
    ]);
    expect(fileTable(files, 1).split('\n')).toEqual([
      'Vitest files (2; each from its start to its end, hooks included, 11 s in all, files in parallel):',
      '  test/slow.test.ts    10.0 s  load 0.5-9.0  FAILED',
      '  … 1 more (--all shows every file)',
    ]);
  });

  it('times each file from its start to its end, as the reporter saw them, and writes them when the run ends', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'file-times-')), 'times.json');
    const reporter = new FileTimesReporter();
    const module = (moduleId: string, state: string) =>
      ({ moduleId, state: () => state }) as unknown as TestModule;
    const saved = process.env.AGENT_GATEWAY_FILE_TIMES;
    process.env.AGENT_GATEWAY_FILE_TIMES = out;
    try {
      reporter.onTestModuleStart(module(`${ROOT}test/a.test.ts`, 'queued'));
      reporter.onTestModuleEnd(module(`${ROOT}test/a.test.ts`, 'failed'));
      reporter.onTestRunEnd();
    } finally {
      if (saved === undefined) delete process.env.AGENT_GATEWAY_FILE_TIMES;
      else process.env.AGENT_GATEWAY_FILE_TIMES = saved;
    }
    const spans = JSON.parse(readFileSync(out, 'utf8'));
    expect(spans).toEqual([
      {
        file: `${ROOT}test/a.test.ts`,
        startTime: expect.any(Number),
        endTime: expect.any(Number),
        state: 'failed',
      },
    ]);
    expect(spans[0].endTime).toBeGreaterThanOrEqual(spans[0].startTime);
    expect(fileTimes(JSON.stringify(spans), samples)[0]).toMatchObject({
      file: 'test/a.test.ts',
      status: 'failed',
    });
  });
});
