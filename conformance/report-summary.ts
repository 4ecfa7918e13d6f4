import type { CheckResult, Unobserved } from './types.ts';
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
    /** Inconclusive MUST checks not accepted with --allow-unobserved: each makes the run exit 2. */
    mustUnobserved: number;
  };
}

/** The counts a report heads with, from its check results (the reporters and the exit code read these). */
export function summariseResults(
  results: readonly CheckResult[],
  allowed: readonly string[] = [],
): ConformanceReport['summary'] {
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
    mustFailed: results.filter((r) => r.verdict === 'fail' && r.level === 'MUST').length,
    shouldFailed: results.filter((r) => r.verdict === 'fail' && r.level === 'SHOULD').length,
    executed: results.length - count('skipped'),
    notServed: results.filter((r) => r.verdict === 'fail' && r.unobserved === 'not-served').length,
    inconclusiveBy,
    mustUnobserved: blockingUnobserved(results, false, allowed).length,
  };
}

/**
 * Exit code for CI. 0: every MUST check (with strict, every SHOULD too) was observed and passed, or was
 * skipped for want of an input or accepted unobserved by the user. 1: a check failed. 2: the suite could
 * not do its job: nothing executed, or a MUST check (with strict, a SHOULD too) could not observe its rule
 * and was not accepted with --allow-unobserved. A failure wins over an unobserved check.
 */
export function exitCodeFor(
  report: Pick<ConformanceReport, 'summary' | 'checks'> &
    Partial<Pick<ConformanceReport, 'allowedUnobserved'>>,
  strict: boolean,
): 0 | 1 | 2 {
  if (report.summary.executed === 0) return 2;
  if (report.summary.mustFailed > 0) return 1;
  if (strict && report.summary.shouldFailed > 0) return 1;
  if (blockingUnobserved(report.checks, strict, report.allowedUnobserved).length > 0) return 2;
  return 0;
}
