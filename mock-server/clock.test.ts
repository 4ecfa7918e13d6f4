import { describe, expect, it } from 'vitest';
import { createClock, MAX_CLOCK_MS } from './clock.ts';

describe('clock', () => {
  it('a frozen clock made with startAt stands exactly at startAt, however the real clock moves meanwhile', () => {
    let real = 1_000;
    // Each reading of the real clock moves it on by a millisecond, as on a loaded machine.
    const clock = createClock({ frozen: true, startAt: 50_000, realNow: () => real++ });
    expect(clock.now()).toBe(50_000);
  });

  it('runs at real time by default', () => {
    let real = 1_000;
    const clock = createClock({ realNow: () => real });
    expect(clock.now()).toBe(1_000);
    real = 1_500;
    expect(clock.now()).toBe(1_500);
    expect(clock.frozen).toBe(false);
  });

  it('freezes, advances without sleeping, and resumes from where it stood', () => {
    let real = 1_000;
    const clock = createClock({ realNow: () => real });
    clock.freeze();
    real = 5_000;
    expect(clock.now()).toBe(1_000);
    clock.advance(10_000);
    expect(clock.now()).toBe(11_000);
    clock.resume();
    real = 5_100;
    expect(clock.now()).toBe(11_100);
  });

  it('can start frozen at a given time, be set, and be reset to real time', () => {
    let real = 50;
    const clock = createClock({ frozen: true, startAt: 1_000_000, realNow: () => real });
    expect(clock.now()).toBe(1_000_000);
    clock.set(2_000_000);
    expect(clock.now()).toBe(2_000_000);
    clock.reset();
    real = 60;
    expect(clock.now()).toBe(60);
  });

  it('refuses to go backwards through advance', () => {
    const clock = createClock();
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
  });

  it('stays within years 1970-9999, where every timestamp has an ISO 8601 and HTTP-date form', () => {
    const clock = createClock({ frozen: true, startAt: MAX_CLOCK_MS - 10 });
    expect(() => clock.advance(11)).toThrow(RangeError);
    clock.advance(10);
    expect(new Date(clock.now()).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    expect(() => clock.set(MAX_CLOCK_MS + 1)).toThrow(RangeError);
    expect(() => clock.set(-1)).toThrow(RangeError);
    expect(clock.now()).toBe(MAX_CLOCK_MS);
  });
});
