import { describe, expect, it } from 'vitest';
import { createTokenThrottle } from './token-throttle.ts';

describe('token throttle: wrong API keys per client address', () => {
  const setup = (perMinute: number | null) => {
    let t = 0;
    const throttle = createTokenThrottle({ perMinute, now: () => t });
    return { throttle, advance: (ms: number) => (t += ms) };
  };

  it('allows the configured number of failures a minute, then refuses with a truthful Retry-After', () => {
    const { throttle, advance } = setup(30);
    for (let i = 0; i < 30; i++) {
      expect(throttle.check('198.51.100.7')).toBeUndefined();
      throttle.failed('198.51.100.7');
    }
    const refused = throttle.check('198.51.100.7');
    expect(refused?.status).toBe(429);
    expect(refused?.code).toBe('rate_limited');
    // One attempt refills every 2 s at 30 a minute.
    expect(refused?.headers['retry-after']).toBe('2');
    advance(1999);
    expect(throttle.check('198.51.100.7')).toBeDefined();
    advance(1);
    expect(throttle.check('198.51.100.7')).toBeUndefined();
  });

  it('counts per address; other addresses and requests without one are never held back', () => {
    const { throttle } = setup(2);
    throttle.failed('a');
    throttle.failed('a');
    expect(throttle.check('a')).toBeDefined();
    expect(throttle.check('b')).toBeUndefined();
    throttle.failed(undefined);
    expect(throttle.check(undefined)).toBeUndefined();
  });

  it('a guesser who keeps guessing while refused is not counted further (the refusal comes before the key is read)', () => {
    const { throttle, advance } = setup(6);
    for (let i = 0; i < 6; i++) throttle.failed('a');
    expect(throttle.check('a')?.headers['retry-after']).toBe('10');
    advance(60_000);
    for (let i = 0; i < 6; i++) {
      expect(throttle.check('a')).toBeUndefined();
      throttle.failed('a');
    }
    expect(throttle.check('a')).toBeDefined();
  });

  it('null: no limit', () => {
    const { throttle } = setup(null);
    for (let i = 0; i < 1000; i++) throttle.failed('a');
    expect(throttle.check('a')).toBeUndefined();
  });
});
