import { describe, expect, it } from 'vitest';
import { recordedEntry } from '../test/support/synthetic-journal.ts';
import type { JournalEntry } from './journal/journal.ts';
import { timelineOf } from './testing.ts';

let t = 0;
/** An in-process whoami of one adapter (delivery instance), 1 ms after the one before, with its delivery facts. */
const delivered = (instance: number, seen: number, order: number): JournalEntry =>
  recordedEntry(++t, { answers_seen: seen, answer_order: order, delivery_instance: instance });

describe('the timeline of a shared journal (several in-process adapters)', () => {
  it("says which answer a request was issued after by its own adapter's count, not another's", () => {
    // Instance A answered #1 and #2; instance B answered its own first (order 1) and then issued a request
    // with that answer in hand (seen 1). A's order-1 entry must not hide B's.
    const a1 = delivered(1, 0, 1);
    const a2 = delivered(1, 1, 2);
    const b1 = delivered(2, 0, 1);
    const b2 = delivered(2, 1, 2);
    const lines = timelineOf([a1, a2, b1, b2], 'a').split('\n');
    const lineOf = (e: JournalEntry) => lines.find((l) => l.includes(`#${e.seq} `)) ?? '';
    expect(lineOf(a2)).toContain(`after #${a1.seq}`);
    expect(lineOf(b2)).toContain(`after #${b1.seq}`);
    expect(lineOf(b1)).toContain('before any answer');
  });
});
