import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import type { RateLimitRule } from '../config/schema.ts';
import { createRateLimiter, formatRetryAfter, rateLimitHeaders } from './rate-limiter.ts';

const rule = (overrides: Partial<RateLimitRule> = {}): RateLimitRule => ({
  name: 'r',
  scope: 'agent',
  algorithm: 'fixed_window',
  limit: 3,
  window_seconds: 10,
  ...overrides,
});
const early = { agentId: 'a-early', tier: 'early_access' };
const verified = { agentId: 'a-verified', tier: 'verified' };
const NOW = 1_800_000_000_000;
const admitted = (
  limiter: ReturnType<typeof createRateLimiter>,
  subject = early,
  op: 'whoami' | 'web.search' | 'web.fetch' = 'whoami',
  times = 1,
) => Array.from({ length: times }, () => limiter.admit(subject, op, NOW).allowed).filter(Boolean).length;

describe('rate limiter', () => {
  test.prop([
    fc.integer({ min: 1, max: 200 }),
    fc.integer({ min: 1, max: 100 }),
    fc.constantFrom('token_bucket', 'fixed_window', 'sliding_window' as const),
  ])('a burst of N requests against a limit L admits exactly min(N, L)', (n, limit, algorithm) => {
    const limiter = createRateLimiter([rule({ limit, algorithm })]);
    expect(admitted(limiter, early, 'whoami', n)).toBe(Math.min(n, limit));
  });

  test.prop([fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 60 })])(
    'agent scope isolates agents: each gets its own limit, whatever the interleaving',
    (order) => {
      const limiter = createRateLimiter([rule({ limit: 5 })]);
      const counts = new Map<string, number>();
      for (const agent of order) {
        if (limiter.admit({ agentId: agent, tier: 'verified' }, 'whoami', NOW).allowed)
          counts.set(agent, (counts.get(agent) ?? 0) + 1);
      }
      for (const agent of new Set(order)) {
        expect(counts.get(agent)).toBe(Math.min(5, order.filter((a) => a === agent).length));
      }
    },
  );

  it('agent_tool scope counts each operation apart; global scope counts everyone together', () => {
    const perTool = createRateLimiter([rule({ scope: 'agent_tool', limit: 2 })]);
    expect(admitted(perTool, early, 'web.search', 5)).toBe(2);
    expect(admitted(perTool, early, 'web.fetch', 5)).toBe(2);
    const global = createRateLimiter([rule({ scope: 'global', limit: 3 })]);
    expect(admitted(global, early, 'whoami', 2) + admitted(global, verified, 'whoami', 2)).toBe(3);
  });

  it('rules apply only to their operations, tiers and agents', () => {
    const limiter = createRateLimiter([
      rule({ name: 'search', operations: ['web.search'], limit: 1 }),
      rule({ name: 'early', tiers: ['early_access'], limit: 2 }),
      rule({ name: 'vip', agents: ['a-verified'], limit: 4 }),
    ]);
    expect(admitted(limiter, verified, 'web.fetch', 10)).toBe(4);
    expect(admitted(limiter, early, 'web.fetch', 10)).toBe(2);
    expect(admitted(limiter, { agentId: 'other', tier: 'verified' }, 'whoami', 10)).toBe(10);
    expect(admitted(limiter, { agentId: 'other2', tier: 'verified' }, 'web.search', 10)).toBe(1);
  });

  it('a request refused by one rule is not counted by the others', () => {
    const limiter = createRateLimiter([
      rule({ name: 'wide', limit: 10 }),
      rule({ name: 'narrow', operations: ['web.search'], limit: 1 }),
    ]);
    expect(admitted(limiter, early, 'web.search', 5)).toBe(1);
    // "wide" counted only the one admitted search, so 9 whoami calls remain.
    expect(admitted(limiter, early, 'whoami', 20)).toBe(9);
  });

  test.prop([
    fc.constantFrom('token_bucket', 'fixed_window', 'sliding_window' as const),
    fc.integer({ min: 2, max: 20 }),
  ])(
    "a refusal reports the other rules' remaining quota as it is: the refused request took none of it",
    (algorithm, wide) => {
      const limiter = createRateLimiter([
        rule({ name: 'wide', limit: wide, algorithm }),
        rule({ name: 'narrow', operations: ['web.search'], limit: 1, algorithm }),
      ]);
      limiter.admit(early, 'web.search', NOW);
      const refused = limiter.admit(early, 'web.search', NOW);
      const reported = refused.outcomes.find((o) => o.rule.name === 'wide')?.remaining;
      // What a whoami now finds left after being admitted, plus itself.
      const next = limiter
        .admit(early, 'whoami', NOW)
        .outcomes.find((o) => o.rule.name === 'wide')?.remaining;
      expect(refused.allowed).toBe(false);
      expect(reported).toBe(wide - 1);
      expect(reported).toBe((next ?? -99) + 1);
    },
  );

  it('refusals name the blocking rule and the longest wait', () => {
    const limiter = createRateLimiter([
      rule({ name: 'short', limit: 1, window_seconds: 2 }),
      rule({ name: 'long', limit: 1, window_seconds: 60 }),
    ]);
    limiter.admit(early, 'whoami', 0);
    const result = limiter.admit(early, 'whoami', 500);
    expect(result.allowed).toBe(false);
    if (!result.allowed) {
      expect(result.blocking.rule.name).toBe('long');
      expect(result.retryAfterMs).toBe(59_500);
    }
  });

  it('configure replaces the rules and forgets the counts', () => {
    const limiter = createRateLimiter([rule({ limit: 1 })]);
    expect(admitted(limiter, early, 'whoami', 3)).toBe(1);
    limiter.configure([rule({ limit: 2 })]);
    expect(admitted(limiter, early, 'whoami', 3)).toBe(2);
    limiter.configure([]);
    expect(admitted(limiter, early, 'whoami', 50)).toBe(50);
  });
});

describe('Retry-After and RateLimit headers', () => {
  it('delta-seconds round up, never early; 0 means now', () => {
    expect(formatRetryAfter(1, NOW, 'seconds')).toBe('1');
    expect(formatRetryAfter(1000, NOW, 'seconds')).toBe('1');
    expect(formatRetryAfter(1001, NOW, 'seconds')).toBe('2');
    expect(formatRetryAfter(0, NOW, 'seconds')).toBe('0');
  });

  test.prop([fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1, max: 86_400_000 })])(
    'an HTTP-date is an IMF-fixdate never before the moment the request would be admitted',
    (now, wait) => {
      const value = formatRetryAfter(wait, now, 'http-date');
      expect(value).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      const date = Date.parse(value);
      expect(date).toBeGreaterThanOrEqual(now + wait);
      expect(date - (now + wait)).toBeLessThan(1000);
    },
  );

  it('RateLimit-Policy and RateLimit follow draft-ietf-httpapi-ratelimit-headers-10', () => {
    const limiter = createRateLimiter([
      rule({ name: 'per-agent', limit: 60, window_seconds: 5, algorithm: 'token_bucket' }),
    ]);
    const result = limiter.admit(early, 'whoami', NOW);
    expect(rateLimitHeaders(result.outcomes)).toEqual({
      'ratelimit-policy': '"per-agent";q=60;w=5',
      ratelimit: '"per-agent";r=59;t=1',
    });
    expect(rateLimitHeaders([])).toEqual({});
  });
});
