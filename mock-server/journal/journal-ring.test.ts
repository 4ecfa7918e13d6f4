import { describe, expect, it } from 'vitest';
import type { JournalEntry } from './journal-entry.ts';
import { createRing, newestOf, sinceForNewest, sliceOf, slicesAfter } from './journal-ring.ts';

const entry = (seq: number, agent: string): JournalEntry =>
  ({ seq, agent, at: Date.UTC(2031, 0, 1) + seq, time: '' }) as unknown as JournalEntry;

/** A ring of `capacity` holding seqs 1..count, agents alternating a, b. */
function filled(capacity: number, count: number) {
  const ring = createRing(capacity);
  for (let seq = 1; seq <= count; seq++) ring.push(entry(seq, seq % 2 ? 'a' : 'b'));
  return { ring, window: (since: number) => ring.window(since, count) };
}

const seqs = (entries: readonly JournalEntry[]) => entries.map((e) => e.seq);

describe('the journal ring', () => {
  it('finds the entry after a seq by arithmetic, also once it has wrapped, and counts what it dropped', () => {
    const { ring, window } = filled(5, 12);
    expect(ring.dropped).toBe(7);
    const all = window(0);
    expect(all.size).toBe(5);
    expect(all.start).toBe(0);
    expect(all.at(0).seq).toBe(8);
    const after10 = window(10);
    expect(after10.at(after10.start).seq).toBe(11);
    expect(window(12).start).toBe(5);
    expect([...ring.all()].map((e) => e.seq)).toEqual([8, 9, 10, 11, 12]);
    ring.reset(3);
    expect(ring.capacity).toBe(3);
    expect(ring.dropped).toBe(0);
    expect(ring.window(0, 12).size).toBe(0);
  });

  it('slices: at most max matching entries, the last seq looked at, and whether more remain up to until', () => {
    const { window } = filled(10, 10);
    const first = sliceOf(window(2), 2, 10, 'a', 2);
    expect(seqs(first.entries)).toEqual([3, 5]);
    expect(first.last).toBe(5);
    expect(first.more).toBe(true);
    const capped = sliceOf(window(5), 5, 8, undefined, 100);
    expect(seqs(capped.entries)).toEqual([6, 7, 8]);
    expect(capped.more).toBe(false);
    // Shown entries are copies with their time.
    expect(first.entries[0]?.time).toBe(new Date(Date.UTC(2031, 0, 1) + 3).toISOString());
  });

  it('the newest matches, and where an export of the newest N starts', () => {
    const { window } = filled(6, 9);
    expect(seqs(newestOf(window(0), 'b', 2))).toEqual([6, 8]);
    expect(seqs(newestOf(window(0), undefined, 50))).toEqual([4, 5, 6, 7, 8, 9]);
    expect(sinceForNewest(window(0), 0, 'a', 2)).toBe(6);
    expect(sinceForNewest(window(0), 0, 'a', 99)).toBe(0);
  });

  it('slices after a seq, each read when asked for, none empty', () => {
    const { window } = filled(20, 20);
    const slices = [...slicesAfter(window, 4, 15, 'b', 3, 10)].map(seqs);
    expect(slices).toEqual([
      [6, 8, 10],
      [12, 14],
    ]);
  });
});
