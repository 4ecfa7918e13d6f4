import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkResult, runReport } from '../../test/support/conformance-report.ts';
import type { Exchange } from '../model/suite-request.ts';
import { exitCodeFor, selectChecks } from '../run/runner.ts';
import { checkEach, checkProperty, settleUnobserved } from './check-cases.ts';
import { type CheckContext, CheckFailure, Inconclusive, observed } from './check-contract.ts';

const ctx = (overrides: Partial<CheckContext> = {}): CheckContext => ({
  client: undefined as never,
  has: { token: true, deniedToken: true, expiredToken: false, revokedToken: false, tier: false },
  endpoints: undefined as never,
  tools: [],
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
  now: () => 0,
  memo: (_key, compute) => compute(),
  log: () => {},
  ...overrides,
});
const failure = () => new CheckFailure({ expected: 'x', actual: 'y', fix: 'z' });

describe('cases planned from the limits seen (the wait allowance)', () => {
  /** A client whose every call waits `waitMs` (a gateway's limit), on a virtual count of waited time. */
  const waitingClient = (waitMs: number) => {
    const client = { waitedMs: 0 };
    const call = async () => {
      client.waitedMs += waitMs;
    };
    return { client: client as unknown as CheckContext['client'], call };
  };

  it('a check whose calls wait sends its first case, then stops once its allowance is spent (counted, never silent)', async () => {
    const { client, call } = waitingClient(2000);
    const outcome = await checkProperty(ctx({ client, caseWaitAllowanceMs: 5000 }), fc.nat(), call);
    expect(outcome.verdict).toBe('pass');
    // 2 s, 4 s, 6 s waited: the fourth case finds the 5 s allowance spent.
    expect(outcome.cases).toEqual({ held: 3, notSent: 27 });
    expect(outcome.message).toMatch(/27 more not sent/);
  });

  it('a gateway whose calls do not wait gets every case', async () => {
    const { client, call } = waitingClient(0);
    const outcome = await checkProperty(ctx({ client, caseWaitAllowanceMs: 5000 }), fc.nat(), call);
    expect(outcome.cases).toEqual({ held: 30, notSent: 0 });
  });

  it('one allowance for a whole check of several categories, each category still tried once', async () => {
    const { client, call } = waitingClient(2000);
    const outcome = await checkEach(
      ctx({ client, caseWaitAllowanceMs: 5000 }),
      { a: fc.nat(), b: fc.nat(), c: fc.nat() },
      call,
    );
    expect(outcome.verdict).toBe('pass');
    // a: 3 cases (6 s waited); b and c find the allowance spent: their first case only.
    expect(outcome.cases?.held).toBe(5);
  });
});

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

describe('what an unobserved case means', () => {
  const exhausted = (key: string): Exchange =>
    ({
      request: { method: 'GET', path: '/v1/whoami' },
      url: 'http://gw.test/v1/whoami',
      credential: 'valid',
      key,
      sentHeaders: [],
      response: { status: 429, headers: { 'retry-after': '3600' }, text: '', json: { code: 'rate_limited' } },
      attempts: 1,
      rateLimitExhausted: true,
      retryAfterMs: 3_600_000,
      transientRetries: 0,
    }) as Exchange;
  const caught = (exchange: Exchange) => {
    try {
      observed(exchange);
    } catch (error) {
      return error as Inconclusive;
    }
    throw new Error('not inconclusive');
  };
  const answering = (keys: string[]) =>
    ctx({ client: { answered: (key: string) => keys.includes(key) } as unknown as CheckContext['client'] });

  it('a call the gateway never served in the run: the check fails, not-served, with a reproduction', () => {
    const outcome = settleUnobserved(answering([]), [caught(exhausted('GET /v1/whoami (valid token)'))]);
    expect(outcome).toMatchObject({ verdict: 'fail', unobserved: 'not-served' });
    expect(outcome?.message).toMatch(
      /^Expected the gateway to answer GET \/v1\/whoami with the valid token at least once in the run; every answer was 429 \(Retry-After 3600 s/,
    );
    expect(outcome?.reproduction?.curl).toMatch(/^curl /);
  });

  it('a call it served earlier: the wait was beyond --max-wait-seconds, inconclusive', () => {
    const key = 'GET /v1/whoami (valid token)';
    const outcome = settleUnobserved(answering([key]), [caught(exhausted(key))]);
    expect(outcome).toMatchObject({ verdict: 'inconclusive', unobserved: 'max-wait' });
    expect(outcome?.message).toMatch(/raise --max-wait-seconds/);
  });

  it('a 5xx failure says server error (possibly transient), and the topic fix gives way', async () => {
    const exchange = {
      ...exhausted('k'),
      response: { status: 503, headers: {}, text: '', json: {} },
      transientRetries: 3,
    };
    const outcome = await checkProperty(ctx(), fc.constant(0), async () => {
      throw new CheckFailure({ expected: '200', actual: '503', fix: 'look header names up', exchange });
    });
    expect(outcome.message).toMatch(
      /got 503: a server error \(possibly transient, still so after 3 retries\)/,
    );
    expect(outcome.message).not.toMatch(/look header names up/);
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
      ({ summary: { mustFailed, shouldFailed, executed }, checks: [] }) as unknown as Parameters<
        typeof exitCodeFor
      >[0];
    expect(exitCodeFor(report(0, 0), false)).toBe(0);
    expect(exitCodeFor(report(0, 1), false)).toBe(0);
    expect(exitCodeFor(report(0, 1), true)).toBe(1);
    expect(exitCodeFor(report(1, 0), false)).toBe(1);
    expect(exitCodeFor(report(0, 0, 0), false)).toBe(2);
  });

  it('exit 2 for an unobserved MUST check (SHOULD too with strict) unless accepted; a failure wins', () => {
    const must = checkResult({
      id: 'ratelimit.burst-429',
      verdict: 'inconclusive',
      unobserved: 'rate-limit-budget',
    });
    const should = checkResult({
      id: 'ratelimit.retry-after-format',
      level: 'SHOULD',
      verdict: 'inconclusive',
      unobserved: 'max-wait',
    });
    const passed = checkResult({ id: 'auth.missing-token', verdict: 'pass' });
    const failed = checkResult({ id: 'auth.invalid-token', verdict: 'fail' });
    expect(exitCodeFor(runReport([passed, must]), false)).toBe(2);
    expect(
      exitCodeFor(runReport([passed, must], { allowedUnobserved: ['ratelimit.burst-429'] }), false),
    ).toBe(0);
    expect(exitCodeFor(runReport([passed, should]), false)).toBe(0);
    expect(exitCodeFor(runReport([passed, should]), true)).toBe(2);
    expect(exitCodeFor(runReport([failed, must]), false)).toBe(1);
    expect(runReport([passed, must]).summary.mustUnobserved).toBe(1);
  });
});
