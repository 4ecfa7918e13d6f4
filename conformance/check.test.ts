import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CheckContext, CheckFailure, checkEach, checkProperty, Inconclusive } from './check.ts';
import { exitCodeFor, selectChecks } from './runner.ts';

const ctx = (overrides: Partial<CheckContext> = {}): CheckContext => ({
  client: undefined as never,
  has: { token: true, deniedToken: true },
  endpoints: undefined as never,
  servedEndpoints: [],
  allowedTools: ['web.search', 'web.fetch'],
  deniedTool: 'web.search',
  rateLimitBudget: 10,
  maxWaitSeconds: 1,
  longWaitSeconds: 120,
  sleep: async () => {},
  seed: 42,
  numRuns: 30,
  timeLimitMs: 10_000,
  memo: (_key, compute) => compute(),
  log: () => {},
  ...overrides,
});
const failure = () => new CheckFailure({ expected: 'x', actual: 'y', fix: 'z' });

describe('checkProperty verdicts', () => {
  it('pass only when every case held', async () => {
    expect((await checkProperty(ctx(), fc.nat(), async () => {})).verdict).toBe('pass');
  });

  it('fail with the shrunk counterexample, seed and path; replaying the path gives the same case', async () => {
    const body = async (n: number) => {
      if (n >= 10) throw failure();
    };
    const outcome = await checkProperty(ctx(), fc.nat(1000), body);
    expect(outcome.verdict).toBe('fail');
    expect(outcome.message).toBe('Expected x; got y. Fix: z');
    expect(outcome.reproduction).toMatchObject({ seed: 42, counterexample: '[10]' });
    const replay = await checkProperty(ctx({ path: outcome.reproduction?.path }), fc.nat(1000), body);
    expect(replay.reproduction?.counterexample).toBe('[10]');
  });

  it('a case that could not be observed makes the check inconclusive, never a pass', async () => {
    const outcome = await checkProperty(ctx(), fc.nat(), async (n) => {
      if (n % 2) throw new Inconclusive('rate-limited');
    });
    expect(outcome.verdict).toBe('inconclusive');
    expect(outcome.message).toMatch(/could not be observed: rate-limited/);
  });

  it('an unexpected error in the check is reported as could-not-run, not as a pass or a gateway failure', async () => {
    const outcome = await checkProperty(ctx(), fc.nat(), async () => {
      throw new TypeError('boom');
    });
    expect(outcome).toMatchObject({ verdict: 'inconclusive', message: 'the check could not run: boom' });
  });
});

describe('checkEach', () => {
  it('runs every category, and the failing one names itself in the message and the replay path', async () => {
    const seen = new Set<string>();
    const categories = { small: fc.nat(5), large: fc.integer({ min: 100, max: 200 }) };
    const outcome = await checkEach(ctx(), categories, async (n, category) => {
      seen.add(category);
      if (n >= 100) throw failure();
    });
    expect(seen).toEqual(new Set(['small', 'large']));
    expect(outcome.verdict).toBe('fail');
    expect(outcome.message).toMatch(/^\[large\] Expected/);
    expect(outcome.reproduction?.path).toMatch(/^large:/);
    const replayed = new Set<string>();
    await checkEach(ctx({ path: outcome.reproduction?.path }), categories, async (_n, category) => {
      replayed.add(category);
    });
    expect(replayed).toEqual(new Set(['large']));
  });
});

describe('run selection and exit codes', () => {
  it('selectChecks keeps registry order and refuses unknown ids', () => {
    expect(selectChecks(['retry.concurrent', 'auth.missing-token']).map((c) => c.id)).toEqual([
      'auth.missing-token',
      'retry.concurrent',
    ]);
    expect(() => selectChecks(['nope'])).toThrow(/unknown check id nope/);
  });

  it('exit 0 unless a MUST failed (SHOULD too with strict); 2 when nothing executed', () => {
    const report = (mustFailed: number, shouldFailed: number, executed = 5) =>
      ({ summary: { mustFailed, shouldFailed, executed } }) as Parameters<typeof exitCodeFor>[0];
    expect(exitCodeFor(report(0, 0), false)).toBe(0);
    expect(exitCodeFor(report(0, 1), false)).toBe(0);
    expect(exitCodeFor(report(0, 1), true)).toBe(1);
    expect(exitCodeFor(report(1, 0), false)).toBe(1);
    expect(exitCodeFor(report(0, 0, 0), false)).toBe(2);
  });
});
