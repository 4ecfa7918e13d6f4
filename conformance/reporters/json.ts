import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { blockingUnobserved, unobservedCheck, unobservedRemedy } from '../run/unobserved.ts';

/**
 * The JSON report (a CI contract): the tools checked (`tools: [{ name, path, write_like }]`), `checks: [{ id, title,
 * spec_ref, level, verdict, unobserved, message, reproduction }]` and a summary with the exit code. `unobserved` says why a check could not observe
 * (`not-served` on a failure; a budget on an inconclusive), else null; `remedy` what would let an unobserved
 * check (inconclusive, or skipped for want of an input) observe; `blocking` whether that keeps the run from
 * passing (exit 2: a MUST check, with `strict` a SHOULD too, neither accepted with --allow-unobserved nor
 * expected), so a reader (the Python package's pytest items) judges as the CLI does.
 */
export function toJsonReport(report: ConformanceReport, exitCode: number, strict = false) {
  const blocking = new Set(
    blockingUnobserved(report.checks, strict, report.allowedUnobserved, report.expectedResults),
  );
  return {
    target: report.target,
    tools: (report.tools ?? []).map((t) => ({
      name: t.name,
      path: t.path,
      write_like: t.writeLike === true,
    })),
    seed: report.seed,
    num_runs: report.numRuns,
    started_at: report.startedAt,
    duration_ms: report.durationMs,
    requests: report.requests,
    time_budget_seconds: report.timeBudgetSeconds,
    waited_ms: report.waitedMs,
    allowed_unobserved: report.allowedUnobserved ?? [],
    strict,
    expected_results: report.expectedResults ?? {},
    checks: report.checks.map((c) => ({
      id: c.id,
      title: c.title,
      spec_ref: formatSpecRef(c.specRef),
      level: c.level,
      verdict: c.verdict,
      unobserved: c.unobserved ?? null,
      remedy: unobservedCheck(c) ? unobservedRemedy(c) : null,
      blocking: blocking.has(c),
      enabled_by: c.enabledBy ?? null,
      message: c.message,
      reproduction: c.reproduction ?? null,
      duration_ms: c.durationMs,
      requests: c.requests,
      shared_with: c.sharedWith ?? null,
    })),
    summary: {
      pass: report.summary.pass,
      fail: report.summary.fail,
      skipped: report.summary.skipped,
      inconclusive: report.summary.inconclusive,
      must_failed: report.summary.mustFailed,
      should_failed: report.summary.shouldFailed,
      executed: report.summary.executed,
      not_served: report.summary.notServed,
      inconclusive_by: report.summary.inconclusiveBy,
      must_unobserved: report.summary.mustUnobserved,
      expected_failures: report.summary.expectedFailures ?? 0,
      stale_expectations: report.summary.stale ?? [],
      exit_code: exitCode,
    },
  };
}
