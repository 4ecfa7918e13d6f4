import { afterEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from './redis-connection.ts';

describe('withDeadline: one deadline for everything a request waits for in the store', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects once the time passed, not before, for work that never settles', async () => {
    vi.useFakeTimers();
    let outcome: unknown;
    withDeadline(new Promise(() => {}), 2000).catch((error: Error) => {
      outcome = error.message;
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toMatch(/no answer within store.timeout_ms \(2000 ms\)/);
  });

  it('chained waits share it: a previous write and the reads after it end at one deadline', async () => {
    vi.useFakeTimers();
    let outcome: unknown;
    const previousWrite = new Promise((resolve) => setTimeout(resolve, 1500));
    const reads = previousWrite.then(() => new Promise(() => {}));
    withDeadline(reads, 2000).catch(() => {
      outcome = 'refused';
    });
    await vi.advanceTimersByTimeAsync(2000);
    expect(outcome).toBe('refused');
  });

  it('passes results and errors through and leaves no timer behind', async () => {
    vi.useFakeTimers();
    await expect(withDeadline(Promise.resolve(7), 1000)).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('NOSCRIPT')), 1000)).rejects.toThrow('NOSCRIPT');
    expect(vi.getTimerCount()).toBe(0);
  });
});
