import { describe, expect, it } from 'vitest';
import type { Exchange } from '../model/suite-request.ts';
import { createShortWaits } from './short-waits.ts';

const limited = { response: { status: 429, headers: { 'retry-after': '5' } } } as unknown as Exchange;

describe('the client evidence of a Retry-After that proved too short', () => {
  it('a retry alone after the wait, answered 429 again, is evidence', () => {
    const waits = createShortWaits();
    const first = waits.answered(1, 429);
    const again = waits.answered(2, 429);
    const candidate = {
      asked: limited,
      askedMs: 5000,
      again: limited,
      after: first,
      sentBy: 2,
      answerNo: again,
    };
    expect(waits.metAgain(candidate)).toBe(true);
    expect(waits.proven()).toHaveLength(1);
  });

  it('a concurrent copy admitted after the 429 may have taken the slot: no evidence, then or later', () => {
    const waits = createShortWaits();
    // Two copies limited, both retried at once: copy 3 is admitted, copy 4 answered 429 first.
    const first = waits.answered(1, 429);
    waits.answered(2, 429);
    const again = waits.answered(4, 429);
    const candidate = {
      asked: limited,
      askedMs: 5000,
      again: limited,
      after: first,
      sentBy: 4,
      answerNo: again,
    };
    expect(waits.metAgain(candidate)).toBe(true);
    // The sibling's 200 arrives after the 429: it explains it, so the evidence is withdrawn.
    waits.answered(3, 200);
    expect(waits.proven()).toEqual([]);
  });

  it('a call sent after the retry was answered explains nothing', () => {
    const waits = createShortWaits();
    const first = waits.answered(1, 429);
    const again = waits.answered(2, 429);
    const candidate = {
      asked: limited,
      askedMs: 5000,
      again: limited,
      after: first,
      sentBy: 2,
      answerNo: again,
    };
    waits.metAgain(candidate);
    waits.answered(3, 200);
    expect(waits.proven()).toHaveLength(1);
  });

  it('an admitted answer already in when the retry meets a 429 again rules the candidate out at once', () => {
    const waits = createShortWaits();
    const first = waits.answered(1, 429);
    waits.answered(2, 200);
    const again = waits.answered(3, 429);
    expect(
      waits.metAgain({
        asked: limited,
        askedMs: 5000,
        again: limited,
        after: first,
        sentBy: 3,
        answerNo: again,
      }),
    ).toBe(false);
    expect(waits.proven()).toEqual([]);
  });
});
