import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { FAULTY_GATEWAYS } from '../fixtures/gateways/faulty-gateways.ts';
import { HALF, proveAgainst } from './support/proof.ts';

describe('the conformance suite fails every faulty gateway, on the broken rule', () => {
  it('the catalogue breaks at least 15 distinct rules, touching every family of checks', () => {
    const broken = new Set(FAULTY_GATEWAYS.map((g) => g.breaks));
    expect(broken.size).toBeGreaterThanOrEqual(15);
    const families = new Set([...broken].map((id) => id?.split('.')[0]));
    expect([...families].sort()).toEqual([...new Set(CHECKS.map((c) => c.id.split('.')[0]))].sort());
    for (const id of broken) expect(CHECKS.map((c) => c.id)).toContain(id);
  });

  it.each(FAULTY_GATEWAYS.slice(0, HALF).map((g) => [g.id, g] as const))(
    '%s',
    async (_id, gateway) => {
      const { report, failing, strictExit } = await proveAgainst(gateway);
      expect(failing, `${gateway.description}: expected ${gateway.breaks} to fail`).toContain(gateway.breaks);
      const result = report.checks.find((c) => c.id === gateway.breaks);
      expect(result?.message).toMatch(/^(\[[\w-]+\] )?Expected /);
      expect(strictExit).toBe(1);
    },
    60_000,
  );
});
