import { setTimeout as realSleep } from 'node:timers/promises';

/** The suite's clock: real time by default; tests share a virtual one with the gateway they run. */
export interface SuiteClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /**
   * Told of each exchange in flight (its answer); real time has no use for it. A virtual clock does not
   * move while one is, so that time passes only when everything waits on the clock (no wait ends before
   * an answer already on its way arrives).
   */
  busy?<T>(work: Promise<T>): Promise<T>;
}

export const REAL_CLOCK: SuiteClock = { now: () => Date.now(), sleep: (ms) => realSleep(ms) };
