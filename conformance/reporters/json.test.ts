import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../model/check-result.ts';
import { type ConformanceReport, summariseResults } from '../run/report-summary.ts';
import { toJsonReport } from './json.ts';

const result = (id: string, level: CheckResult['level'], verdict: CheckResult['verdict']): CheckResult => ({
  id,
  title: id,
  specRef: [{ section: 8 }],
  level,
  verdict,
  message: `${id}: ${verdict}`,
  ...(verdict === 'inconclusive' ? { unobserved: 'rate-limit-budget' as const } : {}),
  durationMs: 0,
  requests: 1,
});

function report(checks: CheckResult[], allowedUnobserved: string[] = []): ConformanceReport {
  return {
    target: 'http://127.0.0.1:8787',
    tools: [],
    seed: 1,
    numRuns: 1,
    startedAt: '2030-01-01T00:00:00.000Z',
    durationMs: 0,
    requests: checks.length,
    timeBudgetSeconds: 300,
    waitedMs: 0,
    checks,
    allowedUnobserved,
    summary: summariseResults(checks, allowedUnobserved),
  };
}

describe('the JSON report says which unobserved checks keep the run from passing', () => {
  const checks = [
    result('must.unobserved', 'MUST', 'inconclusive'),
    result('should.unobserved', 'SHOULD', 'inconclusive'),
    result('must.accepted', 'MUST', 'inconclusive'),
    result('must.failed', 'MUST', 'fail'),
  ];
  const blocking = (strict: boolean) =>
    toJsonReport(report(checks, ['must.accepted']), 2, strict)
      .checks.filter((c) => c.blocking)
      .map((c) => c.id);

  it('a MUST check not accepted by --allow-unobserved; with --strict a SHOULD check too', () => {
    expect(blocking(false)).toEqual(['must.unobserved']);
    expect(blocking(true)).toEqual(['must.unobserved', 'should.unobserved']);
  });

  it('names the remedy of an unobserved check, and the strictness of the run', () => {
    const json = toJsonReport(report(checks), 2, true);
    expect(json.strict).toBe(true);
    expect(json.checks[0]?.remedy).toMatch(/--rate-limit-budget/);
    expect(json.checks[3]?.remedy).toBeNull();
  });
});
