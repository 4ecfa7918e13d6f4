import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../conformance/checks/index.ts';
import { exitCodeFor } from '../../conformance/run/runner.ts';
import type { ProofTarget } from '../gateways/proof-target.ts';
import { proveAgainst } from './proof.ts';

/**
 * Registers one test per valid variant: the suite must pass it with --strict (no false failures), and
 * exit 0 unless the variant leaves a check nothing to observe (then exit 2, 0 once accepted).
 */
export function proveValid(name: string, variants: readonly ProofTarget[]) {
  describe(name, () => {
    it.each(variants.map((v) => [v.id, v] as const))(
      '%s',
      async (_id, variant) => {
        const { report, failing, strictExit, strictExitUnlisted, optionalSkipped } =
          await proveAgainst(variant);
        expect(
          failing,
          `${variant.description}: ${report.checks
            .filter((c) => c.verdict === 'fail')
            .map((c) => c.message)
            .join(' | ')}`,
        ).toEqual([]);
        // A check the variant gives nothing to observe (a limit beyond the burst budget) is never a pass:
        // the run exits 2 naming it, unless the user accepts it with --allow-unobserved.
        const unobserved = Object.entries(variant.unobservable ?? {})
          .filter(([, verdict]) => verdict === 'inconclusive')
          .map(([id]) => id);
        expect(strictExit).toBe(unobserved.length > 0 ? 2 : 0);
        // Green means seen: an optional MUST check the variant gave no input for, unless listed as an
        // expected skip, leaves the run unable to say "conforms" (exit 2).
        if (optionalSkipped.length > 0) expect(strictExitUnlisted).toBe(2);
        expect(
          exitCodeFor({ ...report, allowedUnobserved: unobserved }, true),
          'accepted with --allow-unobserved, the same run exits 0',
        ).toBe(0);
        for (const id of unobserved) expect(report.checks.find((c) => c.id === id)?.unobserved).toMatch(/./);
        // Passing is not enough to prove anything if the checks never looked: each one must pass, unless
        // the variant gives it nothing to observe (then exactly the verdict that says so).
        const verdicts = Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]));
        const expected = Object.fromEntries(
          report.checks.map((c) => [
            c.id,
            variant.unobservable?.[c.id] ?? (optionalSkipped.includes(c.id) ? 'skipped' : 'pass'),
          ]),
        );
        expect(verdicts).toEqual(expected);
        expect(report.checks).toHaveLength(CHECKS.length);
      },
      60_000,
    );
  });
}
