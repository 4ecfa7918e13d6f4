import type { CheckResult } from '../../conformance/model/check-result.ts';
import type { ConformanceReport } from '../../conformance/run/runner.ts';
import { summariseResults } from '../../conformance/run/runner.ts';

/** Test support for the reporter tests: a check result with defaults for what a test does not care about. */
export const checkResult = (
  over: Partial<CheckResult> & Pick<CheckResult, 'id' | 'verdict'>,
): CheckResult => ({
  title: `title of ${over.id}`,
  specRef: [{ section: 4, rules: [1] }],
  level: 'MUST',
  message: 'ok',
  durationMs: 1,
  requests: 1,
  ...over,
});

/** Test support: a run's report around `checks`, its summary counted by the runner's own code. */
export function runReport(
  checks: CheckResult[],
  over: Partial<Omit<ConformanceReport, 'checks' | 'summary'>> = {},
): ConformanceReport {
  return {
    target: 'http://127.0.0.1:1',
    tools: [
      { name: 'web.search', path: '/v1/web/search' },
      { name: 'web.fetch', path: '/v1/web/fetch' },
    ],
    seed: 42,
    numRuns: 25,
    startedAt: '2026-11-23T00:00:00.000Z',
    durationMs: 2500,
    requests: 120,
    timeBudgetSeconds: 300,
    waitedMs: 0,
    ...over,
    allowedUnobserved: over.allowedUnobserved ?? [],
    checks,
    summary: summariseResults(checks, over.allowedUnobserved, over.expectedResults),
  };
}
