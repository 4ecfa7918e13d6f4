import { describe, expect, it } from 'vitest';
import type { CheckResult } from './model/check-result.ts';
import { testOutcome } from './vitest.ts';

/** The vitest front-end judges each check's test as the CLI judges its exit code: green means seen. */
const base = { id: 'auth.expired-token', title: 't', specRef: { section: 3 }, durationMs: 0, requests: 0 };
const skipped = {
  ...base,
  verdict: 'skipped',
  message: 'needs --expired-token or --expired-token-command',
  enabledBy: '--expired-token or --expired-token-command',
} as unknown as CheckResult;

describe('a check test in describeConformance', () => {
  it('a MUST check that could not run for want of an input fails, naming the option', () => {
    const outcome = testOutcome({ id: base.id, level: 'MUST' }, skipped, {});
    expect(outcome.fail).toMatch(/not run: .*\nGive expiredToken \(--expired-token\) or expiredTokenCommand/);
    expect(outcome.fail).toContain("add 'auth.expired-token' to allowUnobserved");
  });

  it('is skipped when the run accepts it, and a SHOULD check is skipped', () => {
    expect(testOutcome({ id: base.id, level: 'MUST' }, skipped, { allowUnobserved: [base.id] })).toEqual({
      skip: `skipped (accepted in allowUnobserved): ${skipped.message}`,
    });
    expect(testOutcome({ id: base.id, level: 'SHOULD' }, skipped, {}).skip).toMatch(/^skipped: /);
  });

  it('a check not selected (no input missing) is skipped, a pass passes', () => {
    const notSelected = { ...base, verdict: 'skipped', message: 'not selected' } as unknown as CheckResult;
    expect(testOutcome({ id: base.id, level: 'MUST' }, notSelected, {})).toEqual({
      skip: 'skipped: not selected',
    });
    expect(
      testOutcome(
        { id: base.id, level: 'MUST' },
        { ...base, verdict: 'pass', message: 'ok' } as unknown as CheckResult,
        {},
      ),
    ).toEqual({});
  });
});
