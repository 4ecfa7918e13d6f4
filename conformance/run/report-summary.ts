import type { CheckResult, Unobserved } from '../model/check-result.ts';
import {
  asExpected,
  type ExpectedResults,
  type StaleExpectation,
  staleExpectations,
} from '../suite/expected-results.ts';
import { blockingUnobserved } from './unobserved.ts';

export interface ConformanceReport {
  target: string;
  /** The tools checked (the spec's two unless the run was told the gateway's own, `--tool`). */
  tools: { name: string; path: string; writeLike?: boolean }[];
  seed: number;
  numRuns: number;
  startedAt: string;
  durationMs: number;
  requests: number;
  /** The run's time budget (s), and the time spent waiting as the gateway asked (ms). */
  timeBudgetSeconds: number;
  waitedMs: number;
  checks: CheckResult[];
  /** The checks the user accepted leaving unobserved (--allow-unobserved), as given. */
  allowedUnobserved: string[];
  /** The verdicts an expected-results file listed (--expected-results), by check id; empty without one. */
  expectedResults?: ExpectedResults;
  summary: {
    pass: number;
    fail: number;
    skipped: number;
    inconclusive: number;
    mustFailed: number;
    shouldFailed: number;
    executed: number;
    /** Failures because the gateway never served what the check needs (among `fail`). */
    notServed: number;
    /** Inconclusive checks by why they could not observe (a budget the user set, a suite error). */
    inconclusiveBy: Partial<Record<Unobserved, number>>;
    /**
     * MUST checks left unobserved (inconclusive, or skipped for want of an input) and neither accepted with
     * --allow-unobserved nor expected: each makes the run exit 2.
     */
    mustUnobserved: number;
    /** Failures the expected-results file lists (not counted in mustFailed and shouldFailed). */
    expectedFailures: number;
    /** Expectations the run no longer met: each fails the run (exit 1). */
    stale: StaleExpectation[];
  };
}

/** The counts a report heads with, from its check results (the reporters and the exit code read these). */
export function summariseResults(
  results: readonly CheckResult[],
  allowed: readonly string[] = [],
  expected: ExpectedResults = {},
): ConformanceReport['summary'] {
  const failed = (level: CheckResult['level']) =>
    results.filter((r) => r.verdict === 'fail' && r.level === level && !asExpected(r, expected)).length;
  const count = (verdict: CheckResult['verdict']) => results.filter((r) => r.verdict === verdict).length;
  const inconclusiveBy: Partial<Record<Unobserved, number>> = {};
  for (const r of results) {
    if (r.verdict === 'inconclusive' && r.unobserved)
      inconclusiveBy[r.unobserved] = (inconclusiveBy[r.unobserved] ?? 0) + 1;
  }
  return {
    pass: count('pass'),
    fail: count('fail'),
    skipped: count('skipped'),
    inconclusive: count('inconclusive'),
    mustFailed: failed('MUST'),
    shouldFailed: failed('SHOULD'),
    executed: results.length - count('skipped'),
    notServed: results.filter((r) => r.verdict === 'fail' && r.unobserved === 'not-served').length,
    inconclusiveBy,
    mustUnobserved: blockingUnobserved(results, false, allowed, expected).length,
    expectedFailures: results.filter((r) => r.verdict === 'fail' && asExpected(r, expected)).length,
    stale: staleExpectations(results, expected),
  };
}

/**
 * Exit code for CI. 0: every MUST check (with strict, every SHOULD too) was observed and passed, or gave
 * the verdict an expected-results file lists for it, or was accepted unobserved by the user. 1: a check
 * failed (one not listed as expected to), or an expectation is stale (the listed verdict no longer happens).
 * 2: the suite could not do its job: nothing executed, or a MUST check (with strict, a SHOULD too) could not
 * observe its rule, inconclusive or skipped for want of an input (named with the option that enables it),
 * and was neither accepted nor expected. A failure wins over an unobserved check.
 */
export function exitCodeFor(
  report: Pick<ConformanceReport, 'summary' | 'checks'> &
    Partial<Pick<ConformanceReport, 'allowedUnobserved' | 'expectedResults'>>,
  strict: boolean,
): 0 | 1 | 2 {
  const expected = report.expectedResults ?? {};
  if (report.summary.executed === 0) return 2;
  // The summary's failures leave out those the expected-results file lists (summariseResults).
  if (report.summary.mustFailed > 0) return 1;
  if (strict && report.summary.shouldFailed > 0) return 1;
  if (staleExpectations(report.checks, expected).length > 0) return 1;
  if (blockingUnobserved(report.checks, strict, report.allowedUnobserved, expected).length > 0) return 2;
  return 0;
}
