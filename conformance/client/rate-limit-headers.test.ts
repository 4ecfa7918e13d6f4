import { describe, expect, it } from 'vitest';
import { exhaustedWaitMs, rateLimitHint } from './rate-limit-headers.ts';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

describe('rate-limit headers', () => {
  it('reads draft 6 RateLimit-* fields (express-rate-limit standardHeaders: draft-6)', () => {
    expect(
      rateLimitHint({ 'ratelimit-limit': '20', 'ratelimit-remaining': '0', 'ratelimit-reset': '7' }),
    ).toEqual({
      remaining: 0,
      resetMs: 7000,
    });
  });

  it('reads draft 7 and draft 8 RateLimit fields, the tightest policy first', () => {
    expect(rateLimitHint({ ratelimit: 'limit=20, remaining=0, reset=9' })).toEqual({
      remaining: 0,
      resetMs: 9000,
    });
    expect(rateLimitHint({ ratelimit: '"burst";r=5;t=1, "hour";r=0;t=3000' })).toEqual({
      remaining: 0,
      resetMs: 3_000_000,
    });
  });

  it('reads X-RateLimit-Reset as delta seconds, epoch seconds or epoch ms, and Reset-After', () => {
    const at = (reset: string) =>
      rateLimitHint({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }, NOW);
    expect(at('12').resetMs).toBe(12_000);
    expect(at(String(NOW / 1000 + 30)).resetMs).toBe(30_000);
    expect(at(String(NOW + 4500)).resetMs).toBe(4500);
    expect(rateLimitHint({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '2' }).resetMs).toBe(
      2000,
    );
  });

  it('asks for a wait only when nothing is left or the answer is a 429', () => {
    const headers = { 'ratelimit-remaining': '3', 'ratelimit-reset': '7' };
    expect(exhaustedWaitMs(200, headers)).toBeUndefined();
    expect(exhaustedWaitMs(429, headers)).toBe(7000);
    expect(exhaustedWaitMs(200, { ...headers, 'ratelimit-remaining': '0' })).toBe(7000);
    expect(exhaustedWaitMs(200, {})).toBeUndefined();
    expect(exhaustedWaitMs(200, { ratelimit: 'garbage' })).toBeUndefined();
  });
});
