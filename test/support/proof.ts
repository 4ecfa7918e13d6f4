import type { ProofTarget } from '../gateways/proof-target.ts';
import { type ProofResult, proveAgainst as prove } from '../gateways/prove.ts';

/** Cases per property in the proof tests: enough to catch every fault (each category runs at least once). */
export const PROOF_RUNS = 8;
/** A fixed seed keeps CI reproducible; `npm run mutation-score -- --seeds N` measures other seeds. */
export const PROOF_SEED = 20261121;

/** Runs the whole suite against a target of the catalogue with the proof tests' seed and case count. */
export function proveAgainst(target: ProofTarget): Promise<ProofResult> {
  return prove(target, { seed: PROOF_SEED, numRuns: PROOF_RUNS });
}

/** A failure message starts with what was expected, after the category label if any (`[long@whoami] `). */
export const EXPECTED_MESSAGE = /^(\[[^\]]+\] )?Expected /;
