import { describe, expect, it, vi } from 'vitest';
import { syntheticEntry } from '../../test/support/synthetic-journal.ts';
import { harOf, harTextSlices } from './har.ts';
import {
  createJournal,
  type Journal,
  type JournalEntry,
  journalPageJson,
  MAX_JOURNAL_PAGE,
  MAX_JOURNAL_SCAN,
} from './journal.ts';
import { type SliceSink, writeSlices } from './write-slices.ts';

let made = 0;
/** The next synthetic entry, its agent taken in turn from SYNTHETIC_AGENTS unless given. */
function add(journal: Journal, agent?: string) {
  const i = made++;
  journal.record({
    ...syntheticEntry(i, agent),
    // Text the page's JSON assembly must not read as a replacement pattern.
    query: i % 7 === 0 ? `$& $' "entries":[] ${i}` : undefined,
  });
}
function filled(capacity: number, count: number) {
  const journal = createJournal(capacity);
  for (let i = 0; i < count; i++) add(journal);
  return journal;
}
const seqsOf = (entries: { seq: number }[]) => entries.map((e) => e.seq);
const linesOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as JournalEntry);
const joined = async (texts: AsyncIterable<string>) => {
  let all = '';
  for await (const text of texts) all += text;
  return all;
};
/** Every slice of an export, in order, and the entries they hold; `between` runs after each slice is read. */
function drain(slices: Iterable<string> | AsyncIterable<string>, between = () => {}) {
  const texts: string[] = [];
  for (const text of slices as Iterable<string>) {
    texts.push(text);
    between();
  }
  return { texts, entries: linesOf(texts.join('')) };
}

describe('journal pages at the boundaries', () => {
  it('since at the first, the last, and an evicted entry; since past the end', () => {
    // 50 entries in a ring of 30: 21..50 are held.
    const journal = filled(30, 50);
    const first = journal.list()[0]?.seq as number;
    expect(first).toBe(21);
    expect(seqsOf(journal.page({ since: first - 1 }).entries)).toEqual(seqsOf(journal.list()));
    expect(seqsOf(journal.page({ since: first }).entries)).toEqual(seqsOf(journal.list()).slice(1));
    // An evicted since: from the oldest entry still held (the gap says entries were lost).
    expect(journal.page({ since: 3 }).entries[0]?.seq).toBe(first);
    expect(journal.page({ since: 50 })).toMatchObject({ entries: [], more: false, next_since: 50 });
    expect(journal.page({ since: 49 }, 1)).toMatchObject({ more: false, next_since: 50 });
    expect(journal.page({ since: 48 }, 1)).toMatchObject({ more: true, next_since: 49 });
    expect(journal.page({ since: 80 })).toMatchObject({ entries: [], more: false, next_since: 80 });
  });

  it('the page cap holds whatever is asked, and next_since pages on without a gap or a repeat', () => {
    const journal = filled(MAX_JOURNAL_PAGE * 3, MAX_JOURNAL_PAGE * 2 + 5);
    const capped = journal.page();
    expect(capped.entries).toHaveLength(MAX_JOURNAL_PAGE);
    const next = journal.page({ since: capped.next_since });
    expect(next.entries[0]?.seq).toBe((capped.entries.at(-1)?.seq as number) + 1);
    expect(journal.page({ limit: 1_000_000 }).entries).toHaveLength(MAX_JOURNAL_PAGE);
  });

  it('an agent filter looks at no more than MAX_JOURNAL_SCAN entries per page, and says where to go on', () => {
    const journal = createJournal(MAX_JOURNAL_SCAN * 2 + 10);
    for (let i = 0; i < MAX_JOURNAL_SCAN * 2 + 10; i++)
      add(journal, i === MAX_JOURNAL_SCAN + 5 ? 'rare' : 'busy');
    const rareSeq = (journal.list({ agent: 'rare' })[0] as JournalEntry).seq;
    const first = journal.page({ agent: 'rare' });
    expect(first).toMatchObject({ entries: [], more: true });
    expect(first.next_since).toBe((journal.list()[0]?.seq as number) + MAX_JOURNAL_SCAN - 1);
    const second = journal.page({ agent: 'rare', since: first.next_since });
    expect(seqsOf(second.entries)).toEqual([rareSeq]);
    // The last page: nothing more, next_since at the journal's end.
    let page = second;
    while (page.more) page = journal.page({ agent: 'rare', since: page.next_since });
    expect(page.next_since).toBe(journal.list().at(-1)?.seq);
  });

  it('readPage (the admin API) gives what page gives', async () => {
    const journal = filled(500, 700);
    for (const filter of [
      {},
      { agent: 'b' },
      { since: 690 },
      { since: 9999 },
      { limit: 3 },
      { limit: 40, agent: 'c' },
    ])
      expect(await journal.readPage(filter, 120)).toEqual(journal.page(filter, 120));
  });

  it('a page as JSON text is the bytes of JSON.stringify(page), made in slices', async () => {
    const journal = filled(500, 700);
    for (const filter of [{}, { agent: 'b' }, { since: 690 }, { since: 9999 }, { limit: 3 }]) {
      const page = journal.page(filter, 333);
      expect(await journalPageJson(page, 7)).toBe(JSON.stringify(page));
    }
  });
});

describe('the NDJSON export', () => {
  it('every entry once, oldest first, as list gives them; agent and since filter', () => {
    const journal = filled(2000, 1234);
    for (const filter of [
      {},
      { agent: 'b' },
      { since: 1000 },
      { agent: 'c', since: 17 },
      { agent: 'nobody' },
    ]) {
      const exported = journal.exportSlices(filter, 100);
      expect(exported.until).toBe(1234);
      const { texts, entries } = drain(exported.slices);
      expect(entries).toEqual(journal.list(filter));
      // Slices are bounded: none holds more than 100 entries.
      for (const text of texts) expect(text.split('\n').filter(Boolean).length).toBeLessThanOrEqual(100);
    }
  });

  it('entries recorded during the export are not in it: the export ends at the seq it started at', () => {
    const journal = filled(5000, 1000);
    const exported = journal.exportSlices({}, 64, Number.POSITIVE_INFINITY);
    // Between two slices, the gateway goes on recording.
    const { entries } = drain(exported.slices, () => {
      for (let i = 0; i < 40; i++) add(journal);
    });
    expect(exported.until).toBe(1000);
    expect(seqsOf(entries)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(journal.list().length).toBeGreaterThan(1000);
  });

  it('entries the ring overwrites before the export reaches them are skipped, never repeated', () => {
    // A ring of 300 full; each slice of 50 is followed by 60 new entries, so the oldest are lost meanwhile.
    const journal = filled(300, 300);
    const exported = journal.exportSlices({}, 50, Number.POSITIVE_INFINITY);
    const seqs = seqsOf(
      drain(exported.slices, () => {
        for (let i = 0; i < 60; i++) add(journal);
      }).entries,
    );
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs.length).toBeLessThan(300);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(seqs.every((seq) => seq <= exported.until)).toBe(true);
    // Each slice starts at the oldest entry still held: the first slice is 1..50, then 60 more pushed 1..60 out.
    expect(seqs.slice(0, 51)).toEqual([...Array.from({ length: 50 }, (_, i) => i + 1), 61]);
  });

  it('a journal emptied during the export ends it', () => {
    const journal = filled(1000, 500);
    const exported = journal.exportSlices({}, 100, Number.POSITIVE_INFINITY);
    const seqs = seqsOf(
      drain(exported.slices, () => {
        journal.clear();
        add(journal);
      }).entries,
    );
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('the HAR export in slices is the bytes of the HAR built at once, limit (newest N) included', async () => {
    const journal = filled(500, 700);
    const origin = 'http://gw.test';
    for (const filter of [
      {},
      { agent: 'b' },
      { since: 650 },
      { limit: 7 },
      { limit: 40, agent: 'c' },
      { limit: 5, since: 695 },
      { limit: 9999 },
    ]) {
      const { slices } = journal.entrySlices(filter, 13, Number.POSITIVE_INFINITY);
      const streamed = await joined(harTextSlices(slices, origin, journal.dropped));
      expect(streamed, JSON.stringify(filter)).toBe(
        JSON.stringify(harOf(journal.list(filter), origin, journal.dropped)),
      );
    }
    expect(await joined(harTextSlices([], origin))).toBe(JSON.stringify(harOf([], origin)));
  });

  it('a slice past its time budget ends early: with none left, one entry a slice, every entry still once', () => {
    const journal = filled(100, 100);
    const { texts, entries } = drain(journal.exportSlices({ agent: 'a' }, 50, -1).slices);
    expect(texts).toHaveLength(25);
    expect(entries).toEqual(journal.list({ agent: 'a' }));
  });

  it("a test's fake timers do not stop a read in slices halfway", async () => {
    const journal = filled(MAX_JOURNAL_PAGE * 3, MAX_JOURNAL_PAGE * 3);
    vi.useFakeTimers();
    try {
      const all = await journal.readAll({});
      expect(all.entries).toHaveLength(MAX_JOURNAL_PAGE * 3);
      expect((await journal.readPage({})).entries).toHaveLength(MAX_JOURNAL_PAGE);
    } finally {
      vi.useRealTimers();
    }
  });

  it('readAll (the report read) gives what list gives, over more than one slice and a scan cap', async () => {
    const journal = createJournal(MAX_JOURNAL_SCAN + 3000);
    for (let i = 0; i < MAX_JOURNAL_SCAN + 3000; i++) add(journal, i % 9 === 0 ? 'x' : `other-${i % 5}`);
    for (const agent of ['x', 'other-1', 'nobody']) {
      const all = await journal.readAll({ agent });
      expect(all.entries).toEqual(journal.list({ agent }));
      expect(all.dropped).toBe(journal.dropped);
    }
  });
});

/** A sink that takes `room` writes, then refuses (full) until the test drains it. */
function fakeSink(room: number) {
  const listeners = { drain: new Set<() => void>(), close: new Set<() => void>() };
  const sink = {
    written: [] as string[],
    full: false,
    destroyed: false,
    writesWhileFull: 0,
    write(chunk: string) {
      if (sink.full) sink.writesWhileFull += 1;
      sink.written.push(chunk);
      if (sink.written.length % room === 0) sink.full = true;
      return !sink.full;
    },
    once(event: 'drain' | 'close', listener: () => void) {
      listeners[event].add(listener);
    },
    off(event: 'drain' | 'close', listener: () => void) {
      listeners[event].delete(listener);
    },
    drain() {
      sink.full = false;
      for (const listener of [...listeners.drain]) listener();
    },
    close() {
      sink.destroyed = true;
      for (const listener of [...listeners.close]) listener();
    },
  };
  return sink satisfies SliceSink;
}
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('writing slices with backpressure', () => {
  it('writes nothing more once the sink is full, until it drains; makes each slice only when needed', async () => {
    let made = 0;
    function* slices() {
      for (let i = 0; i < 10; i++) {
        made += 1;
        yield `slice ${i}\n`;
      }
    }
    const sink = fakeSink(3);
    const done = writeSlices(slices(), sink, () => Promise.resolve());
    await settle();
    expect(sink.written).toHaveLength(3);
    expect(made).toBe(3);
    sink.drain();
    await settle();
    expect(sink.written).toHaveLength(6);
    sink.drain();
    await settle();
    sink.drain();
    await settle();
    sink.drain();
    expect(await done).toBe(10);
    expect(sink.written.join('')).toBe(Array.from({ length: 10 }, (_, i) => `slice ${i}\n`).join(''));
    expect(sink.writesWhileFull).toBe(0);
  });

  it('turns the event loop between slices even when the sink never fills', async () => {
    const sink = fakeSink(1000);
    let turns = 0;
    const written = await writeSlices(['a', 'b', 'c'], sink, async () => {
      turns += 1;
    });
    expect(written).toBe(3);
    expect(turns).toBe(3);
  });

  it('a reader that goes away stops the export and closes its source', async () => {
    let closed = false;
    let made = 0;
    function* slices() {
      try {
        for (;;) {
          made += 1;
          yield 'x\n';
        }
      } finally {
        closed = true;
      }
    }
    const sink = fakeSink(2);
    const done = writeSlices(slices(), sink, () => Promise.resolve());
    await settle();
    sink.close();
    expect(await done).toBe(2);
    expect(closed).toBe(true);
    expect(made).toBe(2);
  });

  it('a journal export through a full sink: one slice per drain, every entry once', async () => {
    const journal = filled(1000, 1000);
    const sink = fakeSink(1);
    const done = writeSlices(journal.exportSlices({}, 100, Number.POSITIVE_INFINITY).slices, sink, () =>
      Promise.resolve(),
    );
    for (let drains = 0; drains < 20 && sink.written.length < 10; drains++) {
      await settle();
      expect(sink.written.length).toBe(drains + 1);
      sink.drain();
    }
    expect(await done).toBe(10);
    expect(linesOf(sink.written.join(''))).toEqual(journal.list());
  });
});
