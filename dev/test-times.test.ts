import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
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
    const report = JSON.stringify({
      testResults: [
        { name: `${ROOT}test/quick.test.ts`, startTime: 6500, endTime: 7000, status: 'passed' },
        { name: `${ROOT}test/slow.test.ts`, startTime: 1500, endTime: 11500, status: 'failed' },
      ],
    });
    const files = fileTimes(report, samples);
    expect(files.map((f) => [f.file, f.seconds])).toEqual([
      ['test/slow.test.ts', 10],
      ['test/quick.test.ts', 0.5],
    ]);
    expect(fileTable(files, 1).split('\n')).toEqual([
      'Vitest files (2; the time their tests ran, 11 s in all, files in parallel):',
      '  test/slow.test.ts    10.0 s  load 0.5-9.0  FAILED',
      '  … 1 more (--all shows every file)',
    ]);
  });
});
