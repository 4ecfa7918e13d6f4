import { describe, expect, it } from 'vitest';
import { describeConformance } from '../conformance/vitest.ts';
import { servedGateway } from './support/served-gateway.ts';

/** `only` returned by an options function narrows the run (the other checks' tests skip, sending nothing). */
const target = servedGateway();

describeConformance('conformance with only, from an options function', async () => {
  const { gateway, baseUrl } = await target.start();
  return { baseUrl, token: gateway.mintToken('agent-verified'), only: ['health.without-token'] };
});

describe('what that run sent', () => {
  it('only health requests: the unselected checks did not run', () => {
    const gateway = target.ran();
    const paths = new Set(gateway.journal.list().map((e) => e.path));
    expect([...paths]).toEqual(['/v1/health']);
  });
});
