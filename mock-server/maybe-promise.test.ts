import { describe, expect, it } from 'vitest';
import { andFinally, andThen } from './maybe-promise.ts';

describe('andThen', () => {
  it('calls fn at once on a plain value and returns its result unwrapped', () => {
    const calls: number[] = [];
    const out = andThen(2, (n) => {
      calls.push(n);
      return n * 3;
    });
    expect(out).toBe(6);
    expect(calls).toEqual([2]);
  });

  it('chains on a promise, and a throw in fn rejects', async () => {
    await expect(andThen(Promise.resolve(2), (n) => n + 1)).resolves.toBe(3);
    await expect(
      andThen(Promise.resolve(1), () => {
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
  });

  it('throws synchronously when fn throws on a plain value', () => {
    expect(() =>
      andThen(1, () => {
        throw new Error('sync');
      }),
    ).toThrow('sync');
  });
});

describe('andFinally', () => {
  it('runs done after a synchronous body, and after one that throws', () => {
    const done: string[] = [];
    expect(
      andFinally(
        () => 'a',
        () => done.push('ok'),
      ),
    ).toBe('a');
    expect(() =>
      andFinally(
        () => {
          throw new Error('x');
        },
        () => done.push('threw'),
      ),
    ).toThrow('x');
    expect(done).toEqual(['ok', 'threw']);
  });

  it('runs done only once a promise body settles, resolved or rejected', async () => {
    const done: string[] = [];
    let resolve!: (v: string) => void;
    const pending = andFinally(
      () => new Promise<string>((r) => (resolve = r)),
      () => done.push('settled'),
    );
    expect(done).toEqual([]);
    resolve('v');
    await expect(pending).resolves.toBe('v');
    expect(done).toEqual(['settled']);
    await expect(
      andFinally(
        () => Promise.reject(new Error('r')),
        () => done.push('rejected'),
      ),
    ).rejects.toThrow('r');
    expect(done).toEqual(['settled', 'rejected']);
  });
});
