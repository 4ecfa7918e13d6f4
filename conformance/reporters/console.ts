import { printable } from '../../vocabulary/redact.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import type { CheckResult } from '../model/check-result.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { unobservedCheck, unobservedRemedy } from '../run/unobserved.ts';
import { asExpected } from '../suite/expected-results.ts';
import { summarySentence, UNOBSERVED_LABEL } from './summary-sentence.ts';

const LABEL: Record<CheckResult['verdict'], string> = {
  pass: 'PASS',
  fail: 'FAIL',
  skipped: 'SKIP',
  inconclusive: 'INCONCLUSIVE',
};
const COLOUR: Record<CheckResult['verdict'], number> = { pass: 32, fail: 31, skipped: 90, inconclusive: 33 };

/** Paints text for a terminal, unless NO_COLOR is set or output is not a TTY. */
export const painter = (enabled: boolean) => (verdict: CheckResult['verdict'], text: string) =>
  enabled ? `\x1b[${COLOUR[verdict]}m${text}\x1b[0m` : text;

/** Long counterexamples (a 5,000-character token) are cut for the terminal; reports keep them whole. */
const abbreviate = (text: string, max = 300) =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;

/** What a check cost, told honestly: "2.1 s, 14 requests" or "0.0 s, 0 requests + the burst of ratelimit.burst-429". */
export function costOf(result: CheckResult): string {
  const shared = result.sharedWith?.length ? ` + the burst of ${result.sharedWith.join(', ')}` : '';
  return `${(result.durationMs / 1000).toFixed(1)} s, ${result.requests} request${result.requests === 1 ? '' : 's'}${shared}`;
}

/** One line per check, as it finishes. */
export function formatCheckLine(result: CheckResult, paint = painter(false)): string {
  const label = paint(result.verdict, LABEL[result.verdict].padEnd(12));
  const line = `${label} ${result.level.padEnd(6)} ${result.id.padEnd(34)} ${result.title} (${costOf(result)})`;
  if (result.verdict === 'pass') return line;
  const why = result.unobserved ? `(${UNOBSERVED_LABEL[result.unobserved]}) ` : '';
  return `${line}\n${' '.repeat(13)}${why}${printable(result.message)}`;
}

/** The failures with their reproductions, and the summary. */
export function formatSummary(report: ConformanceReport, exitCode: number, paint = painter(false)): string {
  const lines: string[] = [];
  const failures = report.checks.filter((c) => c.verdict === 'fail');
  if (failures.length > 0) {
    lines.push('', 'Failures:');
    for (const failure of failures) {
      lines.push(
        '',
        `${paint('fail', failure.id)} (${failure.level}, spec ${formatSpecRef(failure.specRef)}): ${failure.title}`,
        `  ${printable(failure.message)}`,
      );
      const r = failure.reproduction;
      if (r?.counterexample) lines.push(`  counterexample: ${printable(abbreviate(r.counterexample))}`);
      if (r?.curl) lines.push(`  reproduce: ${r.curl}`);
      if (r?.script)
        lines.push('  reproduce the burst (a script):', ...r.script.split('\n').map((l) => `    ${l}`));
      if (r?.seed !== undefined && r.path) lines.push(`  seed ${r.seed}, path "${r.path}"`);
      if (r?.replay) lines.push(`  replay: ${r.replay}`);
    }
  }
  const unobserved = report.checks.filter(unobservedCheck);
  const allowed = report.allowedUnobserved ?? [];
  if (unobserved.length > 0) {
    lines.push(
      '',
      'Not observed (never a pass; a MUST one makes the run exit 2 unless accepted with --allow-unobserved or listed in --expected-results):',
    );
    for (const c of unobserved) {
      const accepted = allowed.includes(c.id)
        ? ' [accepted with --allow-unobserved]'
        : asExpected(c, report.expectedResults)
          ? ' [expected (--expected-results)]'
          : '';
      lines.push(`  ${paint(c.verdict, c.id)} (${c.level})${accepted}: ${printable(unobservedRemedy(c))}`);
    }
  }
  for (const stale of report.summary.stale ?? [])
    lines.push(
      '',
      `${paint('fail', 'stale expectation')}: ${stale.id} was expected to be ${stale.expected} (--expected-results) and is ${stale.actual} now: remove or update its line`,
    );
  if (allowed.length > 0) lines.push('', `Accepted unobserved (--allow-unobserved): ${allowed.join(', ')}`);
  lines.push(
    '',
    summarySentence(report),
    `${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s (time budget ${report.timeBudgetSeconds ?? '?'} s); seed ${report.seed} (replay a run with --seed ${report.seed}); exit code ${exitCode}`,
  );
  return lines.join('\n');
}
