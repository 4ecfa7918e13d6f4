import { describe, expect, it } from 'vitest';
import { FAULTY_GATEWAYS } from '../fixtures/gateways/faulty-gateways.ts';
import { HALF, proveAgainst } from './support/proof.ts';

describe('the conformance suite fails every faulty gateway, on the broken rule (second half)', () => {
  it.each(FAULTY_GATEWAYS.slice(HALF).map((g) => [g.id, g] as const))(
    '%s',
    async (_id, gateway) => {
      const { report, failing, strictExit } = await proveAgainst(gateway);
      expect(failing, `${gateway.description}: expected ${gateway.breaks} to fail`).toContain(gateway.breaks);
      expect(report.checks.find((c) => c.id === gateway.breaks)?.message).toMatch(/^(\[[\w-]+\] )?Expected /);
      expect(strictExit).toBe(1);
    },
    60_000,
  );
});
