import { FAULTY_GATEWAYS } from '../../fixtures/gateways/faulty-gateways.ts';
import type { ProofTarget } from '../../fixtures/gateways/proof-target.ts';
import { type ProofResult, proveAgainst as prove } from '../../fixtures/gateways/prove.ts';

/** Cases per property in the proof tests: enough to catch every fault (each category runs at least twice). */
export const PROOF_RUNS = 8;
/** A fixed seed keeps CI reproducible; `npm run mutation-score -- --seeds N` measures other seeds. */
export const PROOF_SEED = 20261121;

/** Runs the whole suite against a target of the catalogue with the proof tests' seed and case count. */
export function proveAgainst(target: ProofTarget): Promise<ProofResult> {
  return prove(target, { seed: PROOF_SEED, numRuns: PROOF_RUNS });
}

/** The faulty catalogue is proven in two test files, split here, so vitest runs the halves in parallel. */
export const HALF = Math.ceil(FAULTY_GATEWAYS.length / 2);
