import { describe, expect, it } from 'vitest';
import { syntheticEntry } from '../../test/support/synthetic-journal.ts';
import { createJournal, type JournalEntry, MAX_JOURNAL_PAGE } from './journal.ts';

function filled(capacity: number, count: number) {
  const journal = createJournal(capacity);
  for (let i = 0; i < count; i++) journal.record(syntheticEntry(i));
  return journal;
}
/** Every page, from `since`, until `more` is false. */
function pageThrough(
  journal: ReturnType<typeof createJournal>,
  filter: { agent?: string; since?: number },
  max: number,
) {
  const seen: JournalEntry[] = [];
  let since = filter.since;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = journal.page({ ...filter, since }, max);
    expect(page.entries.length).toBeLessThanOrEqual(max);
    seen.push(...page.entries);
    if (!page.more) return { seen, last: page };
    since = page.next_since;
  }
  throw new Error('paging never ended');
}

describe('journal pages: a hard cap per page, paging on with since=next_since', () => {
  for (const [capacity, count] of [
    [100, 250],
    [100, 60],
    [7, 7],
    [50, 0],
  ] as const)
    for (const agent of ['a', 'c', 'nobody', undefined])
      for (const max of [1, 13, 100])
        it(`capacity ${capacity}, ${count} recorded, agent ${agent ?? '(any)'}, pages of ${max}: the pages add up to the whole list, in order`, () => {
          const journal = filled(capacity, count);
          const { seen, last } = pageThrough(journal, { agent }, max);
          expect(seen).toEqual(journal.list({ agent }));
          // Polling on from the last page gets only what is recorded later.
          expect(journal.page({ agent, since: last.next_since }, max).entries).toEqual([]);
        });

  it('from the middle: only entries after since; since past the end: nothing, and next_since stays', () => {
    const journal = filled(100, 250);
    const page = journal.page({ since: 200 }, 10);
    expect(page.entries.map((e) => e.seq)).toEqual([201, 202, 203, 204, 205, 206, 207, 208, 209, 210]);
    expect(page).toMatchObject({ more: true, next_since: 210 });
    expect(journal.page({ since: 999 })).toMatchObject({ entries: [], more: false, next_since: 999 });
    // Before the oldest kept entry: from the oldest.
    expect(journal.page({ since: 3 }, 1).entries[0]?.seq).toBe(151);
  });

  it('limit: the newest entries, as list gives them, never more than the cap', () => {
    const journal = filled(100, 250);
    expect(journal.page({ limit: 5, agent: 'b' })).toMatchObject({
      entries: journal.list({ limit: 5, agent: 'b' }),
      more: false,
    });
    expect(journal.page({ limit: 50 }, 20).entries).toEqual(journal.list({ limit: 20 }));
  });

  it('a journal emptied keeps its sequence: pages start at the first entry after it', () => {
    const journal = filled(10, 25);
    journal.clear();
    expect(journal.page()).toMatchObject({ entries: [], more: false, next_since: 25 });
    journal.record({
      request_id: 'x',
      at: 0,
      duration_ms: 0,
      real_ms: 0,
      method: 'GET',
      path: '/',
      operation: 'other',
      status: 404,
    });
    expect(journal.page({ since: 25 }).entries.map((e) => e.seq)).toEqual([26]);
  });

  it('the default cap is MAX_JOURNAL_PAGE', () => {
    const journal = filled(MAX_JOURNAL_PAGE + 10, MAX_JOURNAL_PAGE + 10);
    const page = journal.page();
    expect(page.entries).toHaveLength(MAX_JOURNAL_PAGE);
    expect(page).toMatchObject({ more: true, next_since: MAX_JOURNAL_PAGE });
  });
});
