import { describe, expect, it } from 'vitest';
import { VALID_VARIANTS } from '../fixtures/gateways/valid-variants.ts';
import { proveAgainst } from './support/proof.ts';

describe('the conformance suite passes every valid variant with --strict (no false failures)', () => {
  it.each(VALID_VARIANTS.map((v) => [v.id, v] as const))(
    '%s',
    async (_id, variant) => {
      const { report, failing, strictExit } = await proveAgainst(variant);
      expect(
        failing,
        `${variant.description}: ${report.checks
          .filter((c) => c.verdict === 'fail')
          .map((c) => c.message)
          .join(' | ')}`,
      ).toEqual([]);
      expect(strictExit).toBe(0);
      // Passing is not enough to prove anything if the checks never looked: each one must pass, unless
      // the variant gives it nothing to observe (then exactly the verdict that says so).
      const verdicts = Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]));
      const expected = Object.fromEntries(
        report.checks.map((c) => [c.id, variant.unobservable?.[c.id] ?? 'pass']),
      );
      expect(verdicts).toEqual(expected);
      expect(report.checks).toHaveLength(15);
    },
    60_000,
  );
});
