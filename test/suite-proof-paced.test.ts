import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { exitCodeFor } from '../conformance/run/runner.ts';
import { blockingUnobserved, remedyOf } from '../conformance/run/unobserved.ts';
import { PACED_BEYOND, PACED_FAULTY, PACED_VALID } from './gateways/paced-gateways.ts';
import { proveAgainst } from './gateways/prove.ts';
import { PROOF_RUNS, PROOF_SEED } from './support/proof.ts';

/**
 * Gateways with ordinary rate limits and blocks, on the virtual clock the suite shares
 * (test/gateways/virtual-clock.ts: minutes of waiting take no real time, whatever the machine's speed),
 * each over several seeds with default options.
 */
const SEEDS = [PROOF_SEED, 7, 424242];
const cases = <T extends { id: string }>(targets: readonly T[]) =>
  targets.flatMap((t) => SEEDS.map((seed) => [t.id, seed, t] as const));

describe('paced: valid gateways with ordinary limits exit 0, every MUST check observed', () => {
  it.each(cases(PACED_VALID))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, optionalSkipped } = await proveAgainst(target, { seed, numRuns: PROOF_RUNS });
      const verdicts = Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]));
      const expected = Object.fromEntries(
        CHECKS.map((c) => [
          c.id,
          target.unobservable?.[c.id] ?? (optionalSkipped.includes(c.id) ? 'skipped' : 'pass'),
        ]),
      );
      expect(
        verdicts,
        report.checks
          .filter((c) => c.verdict !== 'pass')
          .map((c) => `${c.id}: ${c.message}`)
          .join('\n'),
      ).toEqual(expected);
      expect(exitCodeFor(report, true)).toBe(0);
      // Within the default time budget, on the suite's clock.
      expect(report.durationMs).toBeLessThanOrEqual(report.timeBudgetSeconds * 1000);
    },
    120_000,
  );
});

describe('paced: a fault hidden behind a limit or block still fails its check (exit 1)', () => {
  it.each(cases(PACED_FAULTY))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, failing } = await proveAgainst(target, { seed, numRuns: PROOF_RUNS });
      expect(failing, report.checks.map((c) => `${c.id} ${c.verdict}: ${c.message}`).join('\n')).toContain(
        target.breaks,
      );
      expect(exitCodeFor(report, false)).toBe(1);
      for (const id of target.holds ?? [])
        expect(report.checks.find((c) => c.id === id)?.verdict, `${id} on every seed`).toBe('pass');
      // A repeat refused as a duplicate, whichever check met it, is blamed on the check of retry safety.
      for (const c of report.checks.filter((c) => /refused as a duplicate/.test(c.message)))
        expect(c.message, c.id).toMatch(/Blamed on retry\.sequential \(spec §4 rule 4\)/);
    },
    120_000,
  );
});

describe('paced: a limit beyond the burst budget or a few calls an hour never exits 0 (exit 2, naming the option)', () => {
  it.each(cases(PACED_BEYOND))(
    '%s (seed %i)',
    async (_id, seed, target) => {
      const { report, failing } = await proveAgainst(target, { seed, numRuns: PROOF_RUNS });
      expect(failing).toEqual([]);
      expect(exitCodeFor(report, false)).toBe(2);
      const blocking = blockingUnobserved(report.checks, false, []);
      for (const id of target.unobservedIds) expect(blocking.map((c) => c.id)).toContain(id);
      const remedies = blocking.map((c) => (c.unobserved ? remedyOf(c.unobserved) : ''));
      expect(remedies.some((r) => r.includes(target.expectOption))).toBe(true);
      // Accepting exactly the named checks is what makes such a run exit 0.
      expect(exitCodeFor({ ...report, allowedUnobserved: blocking.map((c) => c.id) }, false)).toBe(0);
    },
    120_000,
  );
});
