import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createJournal } from './journal.ts';

const entry = (i: number, agent?: string) => ({
  request_id: `r${i}`,
  at: Date.parse('2026-01-01T00:00:00Z') + i,
  duration_ms: 1,
  real_ms: i,
  method: 'GET',
  path: '/v1/whoami',
  operation: 'whoami',
  status: 200,
  agent,
});

describe('journal', () => {
  test.prop([fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 200 })])(
    'keeps only the last `capacity` entries, oldest first, with increasing seq',
    (capacity, count) => {
      const journal = createJournal(capacity);
      for (let i = 0; i < count; i++) journal.record(entry(i));
      const list = journal.list();
      expect(list).toHaveLength(Math.min(capacity, count));
      expect(list.map((e) => e.request_id)).toEqual(
        Array.from(
          { length: Math.min(capacity, count) },
          (_, k) => `r${count - Math.min(capacity, count) + k}`,
        ),
      );
      for (let k = 1; k < list.length; k++) expect((list[k]?.seq ?? 0) - (list[k - 1]?.seq ?? 0)).toBe(1);
    },
  );

  it('filters by agent, pages with since, keeps the newest with limit, and adds ISO time', () => {
    const journal = createJournal(10);
    for (let i = 0; i < 6; i++) journal.record(entry(i, i % 2 ? 'a' : 'b'));
    expect(journal.list({ agent: 'a' }).map((e) => e.request_id)).toEqual(['r1', 'r3', 'r5']);
    expect(journal.list({ since: 4 }).map((e) => e.seq)).toEqual([5, 6]);
    expect(journal.list({ limit: 2 }).map((e) => e.seq)).toEqual([5, 6]);
    expect(journal.list()[0]?.time).toBe('2026-01-01T00:00:00.000Z');
  });

  it('clear empties it; seq keeps counting so `since` stays valid', () => {
    const journal = createJournal(3);
    journal.record(entry(1));
    journal.clear();
    expect(journal.list()).toEqual([]);
    journal.record(entry(2));
    expect(journal.list()[0]?.seq).toBe(2);
  });
});
