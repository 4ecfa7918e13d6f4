import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import { VALID_VARIANTS } from './gateways/valid-variants.ts';

describe('the proof catalogue', () => {
  it('breaks rules of every family of checks, each a real check', () => {
    const broken = new Set(FAULTY_GATEWAYS.map((g) => g.breaks));
    const families = new Set([...broken].map((id) => id?.split('.')[0]));
    expect([...families].sort()).toEqual([...new Set(CHECKS.map((c) => c.id.split('.')[0]))].sort());
    for (const id of broken) expect(CHECKS.map((c) => c.id)).toContain(id);
  });

  it('every check that can fail on its own is the broken rule of some faulty gateway', () => {
    const broken = new Set(FAULTY_GATEWAYS.map((g) => g.breaks));
    expect(CHECKS.map((c) => c.id).filter((id) => !broken.has(id))).toEqual([]);
  });

  it('ids are unique', () => {
    const ids = [...FAULTY_GATEWAYS, ...VALID_VARIANTS].map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gateways built on Express + express-rate-limit and on Fastify + @fastify/rate-limit are on both sides', () => {
    for (const prefix of ['express', 'fastify']) {
      expect(FAULTY_GATEWAYS.some((g) => g.id.startsWith(prefix))).toBe(true);
      expect(VALID_VARIANTS.some((v) => v.id.startsWith(prefix))).toBe(true);
    }
  });
});
