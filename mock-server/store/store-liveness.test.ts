import { afterEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from './redis-connection.ts';
import { CONFIRM_MS, createStoreLiveness } from './store-liveness.ts';

/** Fake timers and a clock that follows them, plus `stall(ms)`: time that passes with no timer run. */
function fakeTime() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
  let stalled = 0;
  return {
    now: () => Date.now() + stalled,
    stall(ms: number) {
      stalled += ms;
    },
  };
}

describe('a slow store is waited for, a silent one is refused (withDeadline with liveness)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('replies to other commands keep coming (a burst queued ahead): no refusal however long it takes', async () => {
    const time = fakeTime();
    const liveness = createStoreLiveness(time.now);
    let outcome: unknown;
    withDeadline(new Promise(() => {}), 2000, liveness).catch(() => {
      outcome = 'refused';
    });
    for (let t = 500; t <= 10_000; t += 500) {
      await vi.advanceTimersByTimeAsync(500);
      liveness.heard();
    }
    expect(outcome).toBeUndefined();
    // Then silence: refused once nothing was heard for 2000 ms and a short confirmation after it.
    await vi.advanceTimersByTimeAsync(1999);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1 + CONFIRM_MS + 20);
    expect(outcome).toBe('refused');
  });

  it('this process stalled past the deadline with the reply already in the socket: it is read, no refusal', async () => {
    const time = fakeTime();
    const liveness = createStoreLiveness(time.now);
    let release: (value: string) => void = () => {};
    const work = new Promise<string>((resolve) => {
      release = resolve;
    });
    const answered = withDeadline(work, 2000, liveness);
    // A 5 s stall of this process; then the deadline's timer runs first (Node runs timers before it reads
    // sockets), and the reply already in the socket is read after it.
    time.stall(5000);
    setTimeout(() => {
      liveness.heard();
      release('admitted');
    }, 2000);
    await vi.advanceTimersByTimeAsync(2000 + CONFIRM_MS + 20);
    await expect(answered).resolves.toBe('admitted');
  });

  it('a store silent from the start of the wait is refused after about the deadline, not a multiple of it', async () => {
    const time = fakeTime();
    const liveness = createStoreLiveness(time.now);
    let outcome: unknown;
    withDeadline(new Promise(() => {}), 300, liveness).catch((error: Error) => {
      outcome = error.message;
    });
    await vi.advanceTimersByTimeAsync(300);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(CONFIRM_MS + 20);
    expect(outcome).toMatch(/no answer within store.timeout_ms \(300 ms\)/);
  });
});
