import { printable } from '../../vocabulary/redact.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import type { CheckResult } from '../model/check-result.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { unobservedCheck, unobservedRemedy } from '../run/unobserved.ts';
import { asExpected } from '../suite/expected-results.ts';
import { costOf } from './console.ts';
import { summarySentence, UNOBSERVED_LABEL } from './summary-sentence.ts';

const VERDICT: Record<CheckResult['verdict'], string> = {
  pass: '✅ pass',
  fail: '❌ fail',
  skipped: '⏭️ skipped',
  inconclusive: '⚠️ inconclusive',
};

const OUTCOME: Record<number, string> = {
  0: '✅ passed',
  1: '❌ failed',
  2: '⛔ could not run or could not see every rule',
};

/** Long counterexamples (a 5,000-character token) are cut: a step summary is read, not replayed from. */
const abbreviate = (text: string, max = 500) =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;

// Text from the gateway under test is evidence, never markup: it goes into code spans and fenced blocks,
// whose fence is longer than any run of backticks inside, so it cannot close them and inject Markdown or HTML.
const longestBacktickRun = (text: string) =>
  Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));

/** Inline code that shows `text` as it is, on one line. */
export function inlineCode(text: string): string {
  const clean = printable(text).replace(/\r?\n/g, ' ');
  const fence = '`'.repeat(longestBacktickRun(clean) + 1);
  const pad = clean.startsWith('`') || clean.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${clean}${pad}${fence}`;
}

/** A fenced code block that shows `text` as it is. */
export function codeBlock(text: string, language = ''): string {
  const clean = printable(text);
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(clean) + 1));
  return `${fence}${language}\n${clean}\n${fence}`;
}

// A pipe ends a table cell even inside a code span, unless escaped (GitHub removes the backslash there).
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Why a check could not observe its rule, e.g. `(never served) `; empty when it observed it. */
const unobserved = (check: CheckResult) =>
  check.unobserved ? `(${UNOBSERVED_LABEL[check.unobserved]}) ` : '';

function failureSection(check: CheckResult): string[] {
  const r = check.reproduction;
  const lines = [
    `#### ${inlineCode(check.id)} (${check.level}, spec ${formatSpecRef(check.specRef)}): ${unobserved(check)}${check.title}`,
    '',
    codeBlock(check.message, 'text'),
  ];
  if (r?.counterexample)
    lines.push('', 'Counterexample (shrunk):', '', codeBlock(abbreviate(r.counterexample), 'text'));
  if (r?.curl)
    lines.push('', 'Reproduce (tokens stay in `$TOKEN` / `$DENIED_TOKEN`):', '', codeBlock(r.curl, 'sh'));
  if (r?.script)
    lines.push('', 'Reproduce the burst (only a burst shows this):', '', codeBlock(r.script, 'sh'));
  if (r?.replay) lines.push('', 'Replay the shrunk counterexample:', '', codeBlock(r.replay, 'sh'));
  else if (r?.seed !== undefined && r.path) lines.push('', `Seed ${r.seed}, path ${inlineCode(r.path)}.`);
  return lines;
}

/**
 * A Markdown summary of a run, for a CI job page (GitHub's step summary): the outcome, a table with one
 * row per check, each failure with its message, curl reproduction and replay command, the reasons of the
 * skipped and inconclusive checks, and how to replay the run.
 */
export function toMarkdownSummary(
  report: ConformanceReport,
  exitCode: number,
  /** Whose names the advice uses: the CLI's options, or the GitHub Action's inputs. */
  form: 'cli' | 'action' = 'cli',
): string {
  const lines = [
    `## Agent Tool Gateway conformance: ${OUTCOME[exitCode] ?? `exit code ${exitCode}`}`,
    '',
    `Target ${inlineCode(report.target)}. ${summarySentence(report)}. ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s, ${report.numRuns} cases per property, seed ${report.seed}; exit code ${exitCode}.`,
    '',
    '| verdict | level | check | spec | what it checks | time, requests |',
    '| --- | --- | --- | --- | --- | --- |',
    ...report.checks.map(
      (c) =>
        `| ${VERDICT[c.verdict]} | ${c.level} | ${cell(inlineCode(c.id))} | ${cell(formatSpecRef(c.specRef))} | ${cell(c.title)} | ${cell(costOf(c))} |`,
    ),
  ];
  const failures = report.checks.filter((c) => c.verdict === 'fail');
  if (failures.length > 0) {
    lines.push('', '### Failures');
    for (const failure of failures) lines.push('', ...failureSection(failure));
  }
  const stale = report.summary.stale ?? [];
  if (stale.length > 0) {
    lines.push('', '### Stale expectations (each fails the run)', '');
    for (const e of stale)
      lines.push(
        `- ${inlineCode(e.id)} was expected to be ${e.expected} (expected-results file) and is ${e.actual} now: remove or update its line.`,
      );
  }
  const unsure = report.checks.filter((c) => c.verdict === 'skipped' || c.verdict === 'inconclusive');
  if (unsure.length > 0) {
    lines.push(
      '',
      '### Skipped and not observed (never a pass; an unobserved MUST check makes the run exit 2 unless accepted)',
      '',
    );
    for (const c of unsure) {
      const accepted = (report.allowedUnobserved ?? []).includes(c.id)
        ? ' (accepted unobserved)'
        : asExpected(c, report.expectedResults)
          ? ' (expected)'
          : '';
      const remedy = unobservedCheck(c) ? ` What would let it observe: ${unobservedRemedy(c, form)}.` : '';
      lines.push(
        `- ${inlineCode(c.id)} ${c.level} ${c.verdict}${accepted}: ${unobserved(c)}${inlineCode(c.message)}${remedy}`,
      );
    }
  }
  if ((report.allowedUnobserved ?? []).length > 0)
    lines.push(
      '',
      `Accepted unobserved (${form === 'action' ? 'allow-unobserved' : '--allow-unobserved'}): ${report.allowedUnobserved.map(inlineCode).join(', ')}.`,
    );
  lines.push(
    '',
    '### Replay',
    '',
    `The same command with ${inlineCode(`--seed ${report.seed}`)} generates the same cases again${failures.length > 0 ? '; each failure above has the command that replays its shrunk counterexample alone' : ''}.`,
    '',
  );
  return lines.join('\n');
}
