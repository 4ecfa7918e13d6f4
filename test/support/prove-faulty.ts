import { describe, expect, it } from 'vitest';
import type { ProofTarget } from '../gateways/proof-target.ts';
import { EXPECTED_MESSAGE, proveAgainst } from './proof.ts';

/** Registers one test per faulty gateway: the suite must fail it, on the check of its broken rule. */
export function proveFaulty(name: string, gateways: readonly ProofTarget[]) {
  describe(name, () => {
    it.each(gateways.map((g) => [g.id, g] as const))(
      '%s',
      async (_id, gateway) => {
        const { report, failing, strictExit } = await proveAgainst(gateway);
        expect(failing, `${gateway.description}: expected ${gateway.breaks} to fail`).toContain(
          gateway.breaks,
        );
        const result = report.checks.find((c) => c.id === gateway.breaks);
        // Every failing verdict says what was expected, what was seen, and how to reproduce it.
        expect(result?.message).toMatch(EXPECTED_MESSAGE);
        expect(result?.reproduction?.curl).toMatch(
          /^curl -sS -i -X (GET|POST) 'http:\/\/127\.0\.0\.1:\d+\/v1\//,
        );
        expect(strictExit).toBe(1);
      },
      60_000,
    );
  });
}
