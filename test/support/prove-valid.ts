import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../conformance/checks/index.ts';
import type { ProofTarget } from '../../fixtures/gateways/proof-target.ts';
import { proveAgainst } from './proof.ts';

/** Registers one test per valid variant: the suite must pass it with --strict (no false failures). */
export function proveValid(name: string, variants: readonly ProofTarget[]) {
  describe(name, () => {
    it.each(variants.map((v) => [v.id, v] as const))(
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
        expect(report.checks).toHaveLength(CHECKS.length);
      },
      60_000,
    );
  });
}
