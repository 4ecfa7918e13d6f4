import { describe, expect, it } from 'vitest';
import { VALID_VARIANTS } from '../fixtures/gateways/valid-variants.ts';
import { proveAgainst } from './support/proof.ts';

describe('the conformance suite passes every valid variant with --strict (no false failures)', () => {
  it.each(VALID_VARIANTS.map((v) => [v.id, v] as const))(
    '%s',
    async (_id, variant) => {
      const { report, failing, strictExit } = await proveAgainst(variant);
      expect(
        failing,
        `${variant.description}: ${report.checks
          .filter((c) => c.verdict === 'fail')
          .map((c) => c.message)
          .join(' | ')}`,
      ).toEqual([]);
      expect(strictExit).toBe(0);
    },
    60_000,
  );

  it('a gateway without any rate limit makes the 429 checks inconclusive, never failed', async () => {
    const variant = VALID_VARIANTS.find((v) => v.id === 'no-rate-limit');
    if (!variant) throw new Error('no-rate-limit variant missing');
    const { report } = await proveAgainst(variant);
    const verdicts = report.checks
      .filter((c) => c.id.startsWith('ratelimit.') && c.id !== 'ratelimit.no-5xx-under-burst')
      .map((c) => c.verdict);
    expect(verdicts).toEqual(['inconclusive', 'inconclusive', 'inconclusive']);
  });
});
