import { describe, expect, it } from 'vitest';
import type { Check } from '../check-kit/check-contract.ts';
import type { SuiteClient } from '../client/http-client.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { SuiteClock } from '../model/suite-clock.ts';
import type { TokenSource } from '../tokens/token-source.ts';
import { createSharedMemo, preflight, runClock } from './run-steps.ts';

const fixedClock = (at: number): SuiteClock => ({ now: () => at, sleep: async () => {} });

describe('the steps of a run', () => {
  it('runClock: an injected sleep moves time as the suite sees it, unless a clock was given too', async () => {
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
    };
    const base = fixedClock(1000);
    expect(runClock(base, undefined, undefined)).toBe(base);
    const moved = runClock(base, undefined, sleep);
    await moved.sleep(250);
    await moved.sleep(50);
    expect(moved.now()).toBe(1300);
    expect(slept).toEqual([250, 50]);
    const given = runClock(base, base, sleep);
    await given.sleep(250);
    expect(given.now()).toBe(1000);
  });

  it('createSharedMemo: computes once, and a later check that reads it names the check that made it', async () => {
    const shared = createSharedMemo();
    let computed = 0;
    const compute = async () => {
      computed += 1;
      return 'burst';
    };
    shared.begin('ratelimit.a');
    expect(await shared.memo('burst', compute)).toBe('burst');
    expect([...shared.sharedFrom()]).toEqual([]);
    shared.begin('ratelimit.b');
    expect(await shared.memo('burst', compute)).toBe('burst');
    expect(computed).toBe(1);
    expect([...shared.sharedFrom()]).toEqual(['ratelimit.a']);
    shared.begin('ratelimit.c');
    expect([...shared.sharedFrom()]).toEqual([]);
  });

  it('preflight: an unreachable gateway or a token source that fails is the run that cannot work', async () => {
    const client = (status: number) =>
      ({
        send: async () => ({
          response: { status, headers: {}, text: '', json: undefined, error: 'refused' },
        }),
      }) as unknown as SuiteClient;
    const noChecks: Check[] = [];
    await expect(preflight(client(0), 'http://127.0.0.1:9', {}, noChecks)).rejects.toThrow(
      /cannot reach the gateway at http:\/\/127\.0\.0\.1:9: refused/,
    );
    const failing: TokenSource = {
      variable: '$TOKEN',
      current: async () => {
        throw new Error('token command failed');
      },
      refresh: async () => undefined,
    };
    const error = await preflight(client(200), 'http://x', { valid: failing }, noChecks).catch((e) => e);
    expect(error).toBeInstanceOf(CannotRunError);
    expect(error.message).toBe('token command failed');
    await expect(preflight(client(200), 'http://x', {}, noChecks)).resolves.toBeUndefined();
  });
});
