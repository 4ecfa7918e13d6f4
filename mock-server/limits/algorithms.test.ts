import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { type Algorithm, createLimitState } from './algorithms.ts';

const ALGORITHMS: Algorithm[] = ['token_bucket', 'fixed_window', 'sliding_window'];

/** A run: requests at times that only move forward (gaps in ms, many of them zero: bursts). */
const runArb = fc.record({
  algorithm: fc.constantFrom(...ALGORITHMS),
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.integer({ min: 1, max: 5000 }),
  start: fc.integer({ min: 0, max: 2_000_000_000_000 }),
  gaps: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })), {
    minLength: 1,
    maxLength: 120,
  }),
});

type Run = { algorithm: Algorithm; limit: number; windowMs: number; start: number; gaps: number[] };

/** Replays a run; returns the admission times and every refusal with its Retry-After. */
function replay({ algorithm, limit, windowMs, start, gaps }: Run) {
  const state = createLimitState(algorithm, limit, windowMs);
  const admitted: number[] = [];
  const refused: { at: number; retryAfterMs: number }[] = [];
  let now = start;
  for (const gap of gaps) {
    now += gap;
    const decision = state.check(now);
    if (decision.allowed) {
      state.consume(now);
      admitted.push(now);
    } else refused.push({ at: now, retryAfterMs: decision.retryAfterMs });
  }
  return { admitted, refused };
}

describe('rate-limit algorithms', () => {
  test.prop([runArb])('never admit more than the limit in any window', (run) => {
    const { admitted } = replay(run);
    const { algorithm, limit, windowMs } = run;
    if (algorithm === 'fixed_window') {
      const perWindow = new Map<number, number>();
      for (const t of admitted)
        perWindow.set(Math.floor(t / windowMs), (perWindow.get(Math.floor(t / windowMs)) ?? 0) + 1);
      for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(limit);
    } else if (algorithm === 'sliding_window') {
      // Any window (t - windowMs, t] holds at most `limit` admissions.
      for (const t of admitted)
        expect(admitted.filter((u) => u > t - windowMs && u <= t).length).toBeLessThanOrEqual(limit);
    } else {
      // Token bucket: between two admissions at a and b, at most limit + (b - a) * rate were admitted.
      for (let i = 0; i < admitted.length; i++) {
        for (let j = i; j < admitted.length; j++) {
          const span = (admitted[j] as number) - (admitted[i] as number);
          expect(j - i + 1).toBeLessThanOrEqual(limit + Math.floor((span * limit) / windowMs + 1e-9));
        }
      }
    }
  });

  test.prop([runArb])(
    'Retry-After is truthful: waiting it, and sending nothing else, gets admitted',
    (run) => {
      const state = createLimitState(run.algorithm, run.limit, run.windowMs);
      let now = run.start;
      for (const gap of run.gaps) {
        now += gap;
        const decision = state.check(now);
        if (decision.allowed) {
          state.consume(now);
          continue;
        }
        expect(decision.retryAfterMs).toBeGreaterThan(0);
        expect(state.check(now + decision.retryAfterMs).allowed).toBe(true);
      }
    },
  );

  test.prop([runArb])(
    'nextMs (the RateLimit `t`) is exactly when more quota comes, and on a refusal it is the Retry-After',
    (run) => {
      const state = createLimitState(run.algorithm, run.limit, run.windowMs);
      let now = run.start;
      let last = state.check(now);
      for (const gap of run.gaps) {
        now += gap;
        last = state.check(now);
        if (last.allowed) state.consume(now);
      }
      if (!last.allowed) {
        expect(last.nextMs).toBe(last.retryAfterMs);
        return;
      }
      // `remaining` quota is left after the last admission; a check says what is left after admitting it.
      // Checked in increasing time only (a sliding window forgets what has left it).
      if (last.nextMs > 0) {
        const before = state.check(now + last.nextMs - 1);
        expect(before.allowed ? before.remaining : -1).toBeLessThan(last.remaining);
      }
      const at = state.check(now + last.nextMs);
      expect(at.allowed).toBe(true);
      expect(at.remaining).toBeGreaterThanOrEqual(last.remaining);
    },
  );

  test.prop([
    runArb.map((run) => ({ ...run, gaps: run.gaps.map((gap, k) => (k % 7 === 3 ? -gap * 400 : gap)) })),
  ])('Retry-After stays truthful when the clock is set back (virtual time) and forward again', (run) => {
    const state = createLimitState(run.algorithm, run.limit, run.windowMs);
    let now = run.start;
    for (const gap of run.gaps) {
      now += gap;
      const decision = state.check(now);
      if (decision.allowed) state.consume(now);
      else expect(state.check(now + decision.retryAfterMs).allowed).toBe(true);
    }
  });

  test.prop([
    fc.constantFrom(...ALGORITHMS),
    fc.integer({ min: 1, max: 50 }),
    fc.integer({ min: 1, max: 100_000 }),
  ])(
    'a fresh limit admits exactly `limit` requests at one instant, counting remaining down to 0',
    (algorithm, limit, windowMs) => {
      const state = createLimitState(algorithm, limit, windowMs);
      const now = 1_700_000_000_000;
      const remaining: number[] = [];
      for (let i = 0; i < limit; i++) {
        const decision = state.check(now);
        expect(decision.allowed).toBe(true);
        remaining.push(decision.remaining);
        state.consume(now);
      }
      expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => limit - i - 1));
      expect(state.check(now).allowed).toBe(false);
    },
  );

  it('token bucket refills gradually; fixed window all at once at the boundary', () => {
    const bucket = createLimitState('token_bucket', 10, 10_000);
    const window = createLimitState('fixed_window', 10, 10_000);
    for (let i = 0; i < 10; i++) {
      bucket.consume(0);
      window.consume(0);
    }
    expect(bucket.check(999).allowed).toBe(false);
    expect(bucket.check(1000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(window.check(9_999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(window.check(10_000)).toMatchObject({ allowed: true, remaining: 9 });
  });

  it('sliding window frees a slot exactly when the oldest admission leaves the window', () => {
    const sliding = createLimitState('sliding_window', 2, 1000);
    sliding.consume(0);
    sliding.consume(400);
    expect(sliding.check(999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(sliding.check(1000).allowed).toBe(true);
  });
});
