import { type ConformanceReport, exitCodeFor, runConformance } from '../../conformance/runner.ts';
import { FAULTY_GATEWAYS } from '../../fixtures/gateways/faulty-gateways.ts';
import type { ProofTarget } from '../../fixtures/gateways/proof-target.ts';

/** Cases per property in the proof tests: enough to catch every fault (each category runs at least twice). */
export const PROOF_RUNS = 8;
/** A fixed seed keeps CI reproducible; `npm run mutation-score -- --seeds N` measures other seeds. */
export const PROOF_SEED = 20261121;

/** Runs the whole suite against a target of the catalogue; returns the report and the failing check ids. */
export async function proveAgainst(
  target: ProofTarget,
): Promise<{ report: ConformanceReport; failing: string[]; strictExit: number }> {
  const running = await target.start();
  try {
    const report = await runConformance({
      baseUrl: running.baseUrl,
      token: running.token,
      deniedToken: running.deniedToken,
      deniedTool: running.deniedTool,
      seed: PROOF_SEED,
      numRuns: PROOF_RUNS,
    });
    return {
      report,
      failing: report.checks.filter((c) => c.verdict === 'fail').map((c) => c.id),
      strictExit: exitCodeFor(report, true),
    };
  } finally {
    await running.close();
  }
}

/** The faulty catalogue is proven in two test files, split here, so vitest runs the halves in parallel. */
export const HALF = Math.ceil(FAULTY_GATEWAYS.length / 2);
