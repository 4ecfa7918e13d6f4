import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkResult, runReport } from '../../test/support/conformance-report.ts';
import { toJunitXml } from '../reporters/junit.ts';
import { toMarkdownSummary } from '../reporters/markdown.ts';
import { exitCodeFor } from '../run/runner.ts';
import { readExpectedResults, staleExpectations } from './expected-results.ts';

const dir = mkdtempSync(join(tmpdir(), 'expected-results-'));
const file = (text: string) => {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
};

const skippedForInput = checkResult({
  id: 'auth.expired-token',
  verdict: 'skipped',
  message: 'needs --expired-token or --expired-token-command (a genuine token past its lifetime)',
  enabledBy: '--expired-token or --expired-token-command (a genuine token past its lifetime)',
});
const passed = checkResult({ id: 'health.without-token', verdict: 'pass' });
const failed = checkResult({ id: 'retry.sequential', verdict: 'fail', message: 'Expected ...' });

describe('green means seen: a MUST check skipped for want of an input', () => {
  it('makes the run exit 2, named with the option that enables it (JUnit error, the Action’s input name)', () => {
    const report = runReport([passed, skippedForInput]);
    expect(exitCodeFor(report, false)).toBe(2);
    expect(report.summary.mustUnobserved).toBe(1);
    expect(toJunitXml(report)).toMatch(
      /<error type="unobserved"[^>]*>[^<]*What would let it observe: give --expired-token/,
    );
    expect(toMarkdownSummary(report, 2, 'action')).toContain(
      'What would let it observe: give expired-token or expired-token-command',
    );
    // A skip of a rule that does not apply (no Retry-After to check) is no missing input: it does not block.
    const notApplicable = checkResult({
      id: 'ratelimit.retry-after-format',
      verdict: 'skipped',
      level: 'SHOULD',
    });
    expect(exitCodeFor(runReport([passed, notApplicable]), true)).toBe(0);
  });

  it('listed in an expected-results file, the verdict is accepted; a listed verdict that did not happen is stale (exit 1)', () => {
    const expected = readExpectedResults(
      file('auth.expired-token: skipped\nretry.sequential: fail # known\n'),
    );
    expect(expected).toEqual({ 'auth.expired-token': 'skipped', 'retry.sequential': 'fail' });
    const listed = runReport([passed, skippedForInput, failed], { expectedResults: expected });
    expect(listed.summary).toMatchObject({
      mustFailed: 0,
      expectedFailures: 1,
      mustUnobserved: 0,
      stale: [],
    });
    expect(exitCodeFor(listed, false)).toBe(0);
    const fixed = runReport([passed, skippedForInput, { ...failed, verdict: 'pass' }], {
      expectedResults: expected,
    });
    expect(staleExpectations(fixed.checks, expected)).toEqual([
      { id: 'retry.sequential', expected: 'fail', actual: 'pass' },
    ]);
    expect(exitCodeFor(fixed, false)).toBe(1);
    // A check the run did not select is not stale.
    expect(staleExpectations([passed], expected)).toEqual([]);
  });

  it.each([
    ['auth.expired-token: maybe\n', 'auth.expired-token: must be one of fail, skipped, inconclusive'],
    ['- auth.expired-token\n', 'a map of check id to fail, skipped or inconclusive'],
    ['a: [\n', 'is not YAML or JSON'],
  ])('refuses a bad file as the run’s mistake: %j', (text, message) => {
    expect(() => readExpectedResults(file(text))).toThrow(message);
  });
});
