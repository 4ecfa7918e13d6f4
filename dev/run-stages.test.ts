import { describe, expect, it } from 'vitest';
import { chosenStages, runStages, STAGES, type Stage, summary } from './run-stages.ts';

const three: Stage[] = [
  { name: 'first', script: 'a' },
  { name: 'second', script: 'b' },
  { name: 'third', script: 'c' },
];

describe('the stage runner of npm test', () => {
  it('runs every stage after one fails, and reports each with its verdict', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const exits: Record<string, number | string> = { first: 0, second: 1, third: 'SIGTERM' };
    const results = await runStages(
      three,
      async (stage) => {
        ran.push(stage.name);
        return exits[stage.name] as number | string;
      },
      (line) => lines.push(line),
    );
    expect(ran).toEqual(['first', 'second', 'third']);
    expect(results.map((r) => [r.name, r.passed, r.exit])).toEqual([
      ['first', true, 0],
      ['second', false, 1],
      ['third', false, 'SIGTERM'],
    ]);
    expect(lines.filter((l) => l.startsWith('== stage second:'))[0]).toMatch(
      /FAILED \(exit 1\) in \d+\.\d s, load/,
    );
    const text = summary(results);
    expect(text).toMatch(/first +passed in/);
    expect(text).toMatch(/FAILED: second, third$/);
  });

  it('says all passed only when every stage did', async () => {
    const results = await runStages(
      three,
      async () => 0,
      () => undefined,
    );
    expect(summary(results)).toMatch(/All stages passed\.$/);
  });

  it('runs the named stages only, and refuses an unknown name in one line', () => {
    expect(chosenStages([])).toEqual(STAGES);
    expect(chosenStages(['python', 'lint'])).toEqual([
      { name: 'python', script: 'test:python' },
      { name: 'lint', script: 'lint' },
    ]);
    expect(chosenStages(['lint', 'unit'])).toBe(
      'unknown stage unit: the stages are typecheck, lint, vitest, consumers, python',
    );
  });
});
