import type { Unobserved } from '../model/check-result.ts';
import type { ConformanceReport } from '../run/report-summary.ts';

/** Why a check could not observe its rule, as reports say it. */
export const UNOBSERVED_LABEL: Record<Unobserved, string> = {
  'not-served': 'never served',
  'max-wait': 'waits beyond --max-wait-seconds',
  'retry-after-untruthful': 'Retry-After not truthful',
  'rate-limit-budget': 'no 429 within --rate-limit-budget',
  'token-refused': 'token refused mid-run',
  'time-budget': 'beyond --time-budget-seconds',
  'suite-error': 'suite error',
};

/**
 * The sentence every reporter (console, HTML, Markdown) heads its counts with: the checks by verdict, the
 * failures by level (and how many because the gateway never served the calls), the inconclusive ones by why.
 * "21 checks: 19 pass, 1 fail (1 MUST, 0 SHOULD), 1 skipped, 0 inconclusive"
 */
export function summarySentence(report: Pick<ConformanceReport, 'checks' | 'summary'>): string {
  const s = report.summary;
  const notServed = s.notServed > 0 ? `; ${s.notServed} because the gateway never served the calls` : '';
  const why = Object.entries(s.inconclusiveBy)
    .map(([reason, n]) => `${n} ${UNOBSERVED_LABEL[reason as Unobserved]}`)
    .join(', ');
  return `${report.checks.length} checks: ${s.pass} pass, ${s.fail} fail (${s.mustFailed} MUST, ${s.shouldFailed} SHOULD${notServed}), ${s.skipped} skipped, ${s.inconclusive} inconclusive${why ? ` (${why})` : ''}`;
}
