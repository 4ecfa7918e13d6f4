import { describe, expect, it } from 'vitest';
import type { SuiteClock } from '../model/suite-clock.ts';
import { createClientWaits, retryWaitMs } from './client-waits.ts';

/** A virtual clock: sleeping moves it, nothing waits for real. */
function virtualClock(start = 0) {
  let now = start;
  const slept: number[] = [];
  const clock: SuiteClock = {
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
  return { clock, slept };
}

const settings = (clock: SuiteClock, deadline = Number.POSITIVE_INFINITY, floor = 0) => {
  const lines: string[] = [];
  const waits = createClientWaits({
    clock,
    deadline,
    maxWaitSeconds: 30,
    log: (line) => lines.push(line),
    floorOf: () => floor,
  });
  return { waits, lines };
};

describe('the suite client waits', () => {
  it('pause sleeps in steps of at most 15 s, says it still waits, and counts what it waited', async () => {
    const { clock, slept } = virtualClock();
    const { waits, lines } = settings(clock, 100_000);
    await waits.pause(20_000, 'the gateway asked');
    expect(slept).toEqual([15_000, 5_000]);
    expect(waits.waitedMs).toBe(20_000);
    expect(lines[0]).toBe('  waiting 20.0 s: the gateway asked (100 s of the time budget left)');
    expect(lines[1]).toBe('  ... still waiting (5 s left)');
    await waits.pause(500, '');
    expect(lines).toHaveLength(2);
    expect(waits.waitedMs).toBe(20_500);
  });

  it('a gate learnt from the gateway holds the next call of its scope, within --max-wait-seconds only', async () => {
    const { clock, slept } = virtualClock(1000);
    const { waits } = settings(clock);
    await waits.paced('valid', 'GET /v1/whoami');
    expect(slept).toEqual([]);
    waits.learn('valid', 5000, 'asked');
    waits.learn('valid', 1000, 'shorter: ignored');
    await waits.paced('anonymous', 'GET /v1/whoami');
    expect(slept).toEqual([]);
    await waits.paced('valid', 'GET /v1/whoami');
    expect(slept).toEqual([5050]);
    waits.learn('denied', 31_000, 'beyond --max-wait-seconds');
    await waits.paced('denied', 'GET /v1/whoami');
    expect(slept).toEqual([5050]);
  });

  it('retryWaitMs: one formula for every retry wait of the suite (the client and the burst)', () => {
    const random = () => 0.5;
    expect(retryWaitMs(4000, 1, 30_000, 0, random)).toBe(4050);
    expect(retryWaitMs(10_000, 1, 10_000, 0, random)).toBe(10_050); // compared as asked
    expect(retryWaitMs(10_001, 1, 10_000, 0, random)).toBe('max-wait');
    expect(retryWaitMs(0, 2, 30_000, 2000, random)).toBe(2250); // the floor and a quarter of it as jitter
    expect(retryWaitMs(undefined, 2, 30_000, 0, random)).toBe(750); // step 1000: 500 + 0.5 * 500
    expect(retryWaitMs(undefined, 2, 30_000, 900, random)).toBe(900);
    expect(retryWaitMs(undefined, 10, 4000, 0, random)).toBe(3000); // the step capped at the max wait
  });

  it('waitFor: the wait asked plus jitter, a floor over a short one, refused past the cap or the budget', () => {
    const { clock } = virtualClock(0);
    const { waits } = settings(clock, 20_000);
    const plain = waits.waitFor(4000, 1);
    expect('wait' in plain && plain.wait >= 4000 && plain.wait < 4100).toBe(true);
    const floored = waits.waitFor(0, 2, 2000);
    expect('wait' in floored && floored.wait >= 2000).toBe(true);
    expect(waits.waitFor(31_000, 1)).toEqual({ refused: 'max-wait' });
    expect(waits.waitFor(25_000, 1)).toEqual({ refused: 'time-budget' });
    const backoff = waits.waitFor(undefined, 1);
    expect('wait' in backoff && backoff.wait > 0).toBe(true);
    expect(waits.floored('valid', undefined)).toBeUndefined();
    expect(waits.floored('valid', 3000)).toBe(3000);
  });
});
