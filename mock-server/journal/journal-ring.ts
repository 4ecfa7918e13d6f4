import { settleEntry } from './exchange-capture.ts';
import type { JournalEntry } from './journal-entry.ts';
import { nextTurn } from './write-slices.ts';

/*
 * The journal's ring and the readers of a window of it (journal.ts composes them): appending, the entries
 * after a seq, the newest matches, and the deferred work of the entries a reader is about to show.
 */

/**
 * The most entries one page (or one slice of an export or report read) looks at when it filters by agent:
 * a page of an agent with few requests in a full journal of a million ends there (`more`, `next_since`)
 * rather than hold the event loop for a pass over the whole ring.
 */
export const MAX_JOURNAL_SCAN = 20_000;

/** The most time one slice of an export or report read takes before it ends early (see `sliceOf`). */
export const SLICE_BUDGET_MS = 10;

/** An entry as the API shows it: the exchange redacted (once), `time` as ISO text; a copy. */
export const shown = (entry: JournalEntry): JournalEntry => {
  settleEntry(entry);
  return { ...entry, time: new Date(entry.at).toISOString() };
};

/**
 * The ring the journal holds its entries in: seqs are consecutive in it, so the entry after a seq is found
 * by arithmetic, not a search. `window(since)`: the entries held, oldest first, `at(i)` for i in
 * [start, size), `start` the first after `since`.
 */
export function createRing(initialCapacity: number) {
  let capacity = initialCapacity;
  let slots: (JournalEntry | undefined)[] = new Array(capacity);
  let next = 0;
  let dropped = 0;
  return {
    get capacity() {
      return capacity;
    },
    /** Entries overwritten since the ring last started empty. */
    get dropped() {
      return dropped;
    },
    push(entry: JournalEntry) {
      if (slots[next]) dropped += 1;
      slots[next] = entry;
      next = (next + 1) % capacity;
    },
    /** Every entry held, oldest first. */
    *all(): Generator<JournalEntry> {
      for (let i = 0; i < capacity; i++) {
        const entry = slots[(next + i) % capacity];
        if (entry) yield entry;
      }
    },
    window(since: number, lastSeq: number): RingWindow {
      const size = slots[next] ? capacity : next;
      const oldest = size === capacity ? next : 0;
      const firstSeq = size > 0 ? (slots[oldest] as JournalEntry).seq : lastSeq + 1;
      const at = (i: number) => slots[(oldest + i) % capacity] as JournalEntry;
      return { size, start: Math.max(0, Math.min(size, since + 1 - firstSeq)), at };
    },
    /** Empty, with this capacity. */
    reset(nextCapacity = capacity) {
      capacity = nextCapacity;
      slots = new Array(capacity);
      next = 0;
      dropped = 0;
    },
  };
}

export interface RingWindow {
  size: number;
  start: number;
  at: (i: number) => JournalEntry;
}

const matchesAgent = (agent: string | undefined) => (entry: JournalEntry) =>
  agent === undefined || entry.agent === agent;

/**
 * At most `max` matching entries of a window after its start and up to `until`, looking at no more than
 * MAX_JOURNAL_SCAN entries: `last` is the seq of the last entry looked at, `more` whether entries up to
 * `until` remain after it. With `budgetMs` (exports and report reads, whose slices may be any size), it
 * also ends once that much time has passed: an entry's first read redacts its exchange (a secret scan of
 * its headers and bodies, most of a millisecond), so 250 unread entries could hold the loop far longer.
 */
export function sliceOf(
  { size, start, at }: RingWindow,
  since: number,
  until: number,
  agent: string | undefined,
  max: number,
  budgetMs?: number,
) {
  const end = Math.min(size, start + MAX_JOURNAL_SCAN);
  const deadline = budgetMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + budgetMs;
  const matches = matchesAgent(agent);
  const entries: JournalEntry[] = [];
  let i = start;
  for (; i < end && entries.length < max; i++) {
    const entry = at(i);
    if (entry.seq > until) break;
    if (!matches(entry)) continue;
    entries.push(shown(entry));
    if (budgetMs !== undefined && performance.now() > deadline) {
      i += 1;
      break;
    }
  }
  const last = i > start ? at(i - 1).seq : since;
  return { entries, last, more: i < size && at(i).seq <= until };
}

/** The newest `wanted` matching entries of a window, oldest first (`page` with a limit). */
export function newestOf(
  { size, start, at }: RingWindow,
  agent: string | undefined,
  wanted: number,
): JournalEntry[] {
  const matches = matchesAgent(agent);
  const entries: JournalEntry[] = [];
  for (let i = size - 1; i >= start && entries.length < wanted; i--) {
    const entry = at(i);
    if (matches(entry)) entries.push(shown(entry));
  }
  return entries.reverse();
}

/** The seq just before the `limit`-th newest matching entry of a window (comparisons only), or `since`. */
export function sinceForNewest(
  { size, start, at }: RingWindow,
  since: number,
  agent: string | undefined,
  limit: number,
) {
  const matches = matchesAgent(agent);
  for (let i = size - 1, found = 0; i >= start; i--) {
    const entry = at(i);
    if (matches(entry) && ++found === limit) return entry.seq - 1;
  }
  return since;
}

/**
 * The deferred work (readings, exchange redaction) of the entries a page will show, SLICE_BUDGET_MS at a
 * time with a turn of the event loop between: a page of 1,000 entries never read before (1,000 secret
 * scans) is not one long block.
 */
export async function settlePageEntries(
  { size, start, at }: RingWindow,
  filter: { agent?: string; limit?: number },
  max: number,
) {
  const matches = matchesAgent(filter.agent);
  const wanted = Math.min(filter.limit ?? max, max);
  const backwards = filter.limit !== undefined;
  let deadline = performance.now() + SLICE_BUDGET_MS;
  let found = 0;
  const end = Math.min(size, start + MAX_JOURNAL_SCAN);
  for (let k = 0; found < wanted && k < (backwards ? size - start : end - start); k++) {
    const entry = at(backwards ? size - 1 - k : start + k);
    if (!matches(entry)) continue;
    found += 1;
    settleEntry(entry);
    if (performance.now() > deadline) {
      await nextTurn();
      deadline = performance.now() + SLICE_BUDGET_MS;
    }
  }
}

/**
 * The deferred work of every entry after `since` up to `until`, a slice of SLICE_BUDGET_MS at a time with a
 * turn of the event loop between two. An entry whose work fails is left for a reader, which then sees the
 * error (nothing in the background throws unseen).
 */
export async function settleRecordedUpTo(
  window: (since: number) => RingWindow,
  since: number,
  until: number,
): Promise<void> {
  for (;;) {
    const { size, start, at } = window(since);
    const deadline = performance.now() + SLICE_BUDGET_MS;
    let i = start;
    for (; i < size && at(i).seq <= until && performance.now() <= deadline; i++) {
      try {
        settleEntry(at(i));
      } catch {
        // Left for a reader.
      }
      since = at(i).seq;
    }
    if (i >= size || at(i).seq > until) return;
    await nextTurn();
  }
}

/**
 * The entries after `from` up to `until` that match `agent`, as arrays of at most `sliceEntries` (none
 * empty), each read only when it is asked for (`sliceOf`, with its time budget), from the ring as it is then:
 * entries the ring overwrote meanwhile are skipped.
 */
export function* slicesAfter(
  window: (since: number) => RingWindow,
  from: number,
  until: number,
  agent: string | undefined,
  sliceEntries: number,
  budgetMs: number,
): Generator<JournalEntry[], void, undefined> {
  let since = from;
  for (;;) {
    const found = sliceOf(window(since), since, until, agent, sliceEntries, budgetMs);
    if (found.entries.length > 0) yield found.entries;
    if (!found.more) return;
    since = found.last;
  }
}

/**
 * One page's entries (see `Journal.page`): with `limit`, the newest `limit` (at most `max`) matching
 * entries; else at most `max` from the entry after `since`, looking at no more than MAX_JOURNAL_SCAN.
 */
export function pageAfter(
  window: (since: number) => RingWindow,
  seq: number,
  filter: { agent?: string; since?: number; limit?: number },
  max: number,
): { entries: JournalEntry[]; more: boolean; next_since: number } {
  const since = filter.since ?? 0;
  if (filter.limit !== undefined)
    return {
      entries: newestOf(window(since), filter.agent, Math.min(filter.limit, max)),
      more: false,
      next_since: seq,
    };
  const found = sliceOf(window(since), since, seq, filter.agent, max);
  return {
    entries: found.entries,
    more: found.more,
    next_since: found.more ? found.last : Math.max(seq, since),
  };
}

/**
 * Every entry up to `until` matching `agent`, read in slices of at most `sliceMax` (each within
 * SLICE_BUDGET_MS) with a turn of the event loop between two: a full journal of a million is never one
 * synchronous pass.
 */
export async function readMatching(
  window: (since: number) => RingWindow,
  until: number,
  agent: string | undefined,
  sliceMax: number,
): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  let since = 0;
  for (;;) {
    const found = sliceOf(window(since), since, until, agent, sliceMax, SLICE_BUDGET_MS);
    for (const entry of found.entries) entries.push(entry);
    if (!found.more) return entries;
    since = found.last;
    await nextTurn();
  }
}
