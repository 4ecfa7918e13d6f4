import { describe, expect, it } from 'vitest';
import { HELD_OUT_VALID } from './gateways/held-out-families.ts';
import { proveAgainst } from './gateways/prove.ts';
import { cases, expectedVerdicts, explain, verdictsOf } from './support/held-out-proof.ts';
import { PROOF_RUNS } from './support/proof.ts';

/**
 * The legal oddities of a held-out round, each on two seeds: the conformance suite passes every check
 * (the faulty families are in test/suite-proof-held-out.test.ts).
 */
describe('held-out families: the legal oddity passes every check on every seed (exit 0 with --strict)', () => {
  it.each(cases(HELD_OUT_VALID))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, strictExit, optionalSkipped } = await proveAgainst(target, {
        seed,
        numRuns: PROOF_RUNS,
      });
      expect(verdictsOf(report.checks), explain(report.checks)).toEqual(expectedVerdicts(optionalSkipped));
      expect(strictExit).toBe(0);
    },
    120_000,
  );
});
