import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { exitCodeFor } from '../conformance/run/runner.ts';
import { HELD_OUT_FAULTY } from './gateways/held-out-families.ts';
import { PACED_UNTRUTHFUL } from './gateways/paced-gateways.ts';
import { proveAgainst } from './gateways/prove.ts';
import { cases, expectedVerdicts, explain, verdictsOf } from './support/held-out-proof.ts';
import { PROOF_RUNS } from './support/proof.ts';

/**
 * The families of a held-out round (issue 33), each on two seeds: the faulty gateway fails its rule, by
 * name, whatever the seed (and --allow-unobserved cannot make it green); the valid one passes every check
 * (test/suite-proof-held-out-valid.test.ts: a file of its own, so the two halves run side by side).
 */
describe('held-out families: the faulty gateway fails its rule on every seed (exit 1, even with everything accepted unobserved)', () => {
  it.each(cases(HELD_OUT_FAULTY))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, failing } = await proveAgainst(target, { seed, numRuns: PROOF_RUNS });
      expect(failing, explain(report.checks)).toContain(target.breaks);
      const broken = report.checks.find((c) => c.id === target.breaks);
      // A failure, not "could not observe": no budget would show a 429 that the gateway never sends.
      expect(broken?.unobserved).toBeUndefined();
      const everything = CHECKS.map((c) => c.id);
      expect(exitCodeFor({ ...report, allowedUnobserved: everything }, false)).toBe(1);
      if (target.id === 'balancer-one-instance-stale-key') {
        // The gateway is blamed, with both sides of the evidence, and the run wrote its report.
        expect(broken?.message).toMatch(
          /got 401 .* to .*answer \d+ of the run.* accepted again by .*answer \d+/,
        );
        expect(broken?.reproduction?.script).toMatch(/seq 1 12/);
        // A check that failed on a refusal of the real token (its resend refused too) says whom it blames.
        for (const c of report.checks.filter((c) => c.id !== target.breaks && c.verdict === 'fail'))
          if (/got 401 .*invalid_identity_token.* to .* with the (valid|denied) token/.test(c.message))
            expect(c.message, c.id).toMatch(
              /auth\.valid-token-accepted \(spec §4 rule 2\) reports the evidence/,
            );
        // The rate-limit checks were not told "the token expired": the burst went on past the refusals.
        for (const c of report.checks.filter((c) => c.id.startsWith('ratelimit.')))
          expect(c.unobserved, `${c.id}: ${c.message}`).not.toBe('token-refused');
      }
    },
    120_000,
  );
});

describe('untruthful Retry-After: every MUST check observed and passed, the SHOULD of a truthful Retry-After failed', () => {
  it.each(cases(PACED_UNTRUTHFUL))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, strictExit, optionalSkipped } = await proveAgainst(target, {
        seed,
        numRuns: PROOF_RUNS,
      });
      expect(verdictsOf(report.checks), explain(report.checks)).toEqual(
        expectedVerdicts(optionalSkipped, target.breaks),
      );
      expect(strictExit).toBe(1);
      expect(exitCodeFor(report, false)).toBe(0);
      // No advice repeated check after check: nothing was left unobserved to advise on.
      expect(report.checks.filter((c) => c.verdict === 'inconclusive')).toEqual([]);
    },
    120_000,
  );
});
