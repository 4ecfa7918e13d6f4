import { CHECKS } from '../../conformance/checks/index.ts';
import { PROOF_SEED } from './proof.ts';

/** The held-out round's proofs (test/suite-proof-held-out.test.ts): each family on two seeds. */
const SEEDS = [PROOF_SEED, 99];

/** A test per target and seed: `[id, seed, target]`. */
export const cases = <T extends { id: string }>(targets: readonly T[]) =>
  targets.flatMap((t) => SEEDS.map((seed) => [t.id, seed, t] as const));

export const verdictsOf = (checks: { id: string; verdict: string }[]) =>
  Object.fromEntries(checks.map((c) => [c.id, c.verdict]));

/** Every check's expected verdict: `breaks` fails, the optional checks the run skipped are skipped, the rest pass. */
export const expectedVerdicts = (optionalSkipped: readonly string[], breaks?: string) =>
  Object.fromEntries(
    CHECKS.map((c) => [c.id, c.id === breaks ? 'fail' : optionalSkipped.includes(c.id) ? 'skipped' : 'pass']),
  );

/** The checks that did not pass, each with its verdict and message: what a failed expectation shows. */
export const explain = (checks: { id: string; verdict: string; message: string }[]) =>
  checks
    .filter((c) => c.verdict !== 'pass')
    .map((c) => `${c.id} ${c.verdict}: ${c.message}`)
    .join('\n');
