import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { exitCodeFor } from '../conformance/run/runner.ts';
import { HELD_OUT_FAULTY, HELD_OUT_VALID } from './gateways/held-out-families.ts';
import { PACED_UNTRUTHFUL } from './gateways/paced-gateways.ts';
import { proveAgainst } from './gateways/prove.ts';
import { cases, expectedVerdicts, explain, verdictsOf } from './support/held-out-proof.ts';
import { PROOF_RUNS } from './support/proof.ts';

/**
 * The families of a held-out round, each on two seeds: the faulty gateway fails its rule, by name, whatever
 * the seed (and --allow-unobserved cannot make it green); the legal oddity passes every check. Each runs on
 * the virtual clock it shares with the suite (test/gateways/virtual-clock.ts): no real waits, no verdict
 * that moves with load. Real time is proven by test/conformance-reference.test.ts and the CLI tests.
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
