import { afterEach, describe, expect, it } from 'vitest';
import { CannotRunError, defaultSeed } from './runner.ts';

describe('defaultSeed', () => {
  const saved = process.env.AGENT_GATEWAY_SEED;
  afterEach(() => {
    if (saved === undefined) delete process.env.AGENT_GATEWAY_SEED;
    else process.env.AGENT_GATEWAY_SEED = saved;
  });

  it('takes AGENT_GATEWAY_SEED when set, so CI can pin a run', () => {
    process.env.AGENT_GATEWAY_SEED = ' 42 ';
    expect(defaultSeed()).toBe(42);
  });

  it('an empty AGENT_GATEWAY_SEED means unset (random), like the token variables, not seed 0', () => {
    process.env.AGENT_GATEWAY_SEED = '';
    const seeds = new Set(Array.from({ length: 5 }, () => defaultSeed()));
    expect(seeds.size).toBeGreaterThan(1);
  });

  it('refuses a seed that is not an integer in range, rather than ignoring it', () => {
    for (const bad of ['abc', '1.5', '-3', '4294967296']) {
      process.env.AGENT_GATEWAY_SEED = bad;
      expect(() => defaultSeed()).toThrow(CannotRunError);
    }
  });
});
