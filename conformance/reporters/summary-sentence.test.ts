import { describe, expect, it } from 'vitest';
import { checkResult, runReport } from '../../test/support/conformance-report.ts';
import type { ConformanceReport } from '../run/report-summary.ts';
import { formatSummary } from './console.ts';
import { escapeHtml, toHtmlReport } from './html.ts';
import { toMarkdownSummary } from './markdown.ts';
import { summarySentence } from './summary-sentence.ts';

const report = runReport([
  checkResult({ id: 'health.without-token', verdict: 'pass' }),
  checkResult({ id: 'auth.invalid-token', verdict: 'fail' }),
  checkResult({ id: 'ratelimit.retry-after', verdict: 'fail', level: 'SHOULD' }),
  checkResult({ id: 'authz.access-denied', verdict: 'skipped', message: 'needs --denied-token' }),
  checkResult({ id: 'ratelimit.burst-429', verdict: 'inconclusive', unobserved: 'rate-limit-budget' }),
  checkResult({ id: 'ratelimit.no-5xx', verdict: 'inconclusive', unobserved: 'time-budget' }),
]);

describe('the summary sentence', () => {
  it('counts the checks by verdict, the failures by level, the inconclusive ones by why', () => {
    expect(summarySentence(report)).toBe(
      '6 checks: 1 pass, 2 fail (1 MUST, 1 SHOULD), 1 skipped, 2 inconclusive (1 no 429 within --rate-limit-budget, 1 beyond --time-budget-seconds)',
    );
    const neverServed: ConformanceReport = { ...report, summary: { ...report.summary, notServed: 1 } };
    expect(summarySentence(neverServed)).toContain(
      '(1 MUST, 1 SHOULD; 1 because the gateway never served the calls)',
    );
  });

  it('is the one the console, HTML and Markdown reports head with', () => {
    const sentence = summarySentence(report);
    expect(formatSummary(report, 1).split('\n')).toContain(sentence);
    expect(toHtmlReport(report, 1)).toContain(`<p>${escapeHtml(sentence)}.</p>`);
    expect(toMarkdownSummary(report, 1)).toContain(`. ${sentence}. `);
  });
});
