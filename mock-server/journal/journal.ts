import { createBoundedMap } from '../bounded-map.ts';
import type { RecordedWork } from './entry-record.ts';
import type { JournalExchange } from './exchange-capture.ts';
import type { JournalEntry } from './journal-entry.ts';
import {
  type AgentMatch,
  agentMatches,
  createRing,
  MAX_JOURNAL_SCAN,
  pageAfter,
  readMatching,
  SLICE_BUDGET_MS,
  settlePageEntries,
  settleRecordedUpTo,
  shown,
  sinceForNewest,
  slicesAfter,
} from './journal-ring.ts';
import type { EntryWork, ExchangeWork } from './record-ring.ts';
import { nextTurn } from './write-slices.ts';

export type { JournalEntry, JournalNote, TargetErrorCode } from './journal-entry.ts';
export { CONNECTION_IDS_PER_INSTANCE } from './journal-entry.ts';
export type { JournalExchange };
export { MAX_JOURNAL_SCAN, SLICE_BUDGET_MS };

/**
 * The most entries one page of the journal API holds (GET /__admin/journal): a page is serialised in one go,
 * so this bounds how long it holds the event loop and how much memory it takes, whatever the capacity.
 */
export const MAX_JOURNAL_PAGE = 1000;

/** What the journal API asks for: an agent's entries, those after `since`, the newest `limit` of them. */
export interface JournalFilter {
  /** An agent's id; or, for the client report, an agent's id with every entry no agent was named for. */
  agent?: AgentMatch;
  since?: number;
  limit?: number;
}

/** An NDJSON export: entries up to seq `until`, as slices of text (one JSON entry a line). */
export interface JournalExport {
  until: number;
  slices: Iterable<string> | AsyncIterable<string>;
}

/**
 * One page of the journal. `more`: entries after `next_since` may match (ask again with
 * `since=next_since`); `next_since`: the seq to page on from (the last entry looked at).
 */
export interface JournalPageOf<E = JournalEntry> {
  capacity: number;
  dropped: number;
  entries: E[];
  more: boolean;
  next_since: number;
}

/** Entries as NDJSON text, one JSON entry a line: a slice of the export, from memory or from Redis. */
export function ndjsonOf(entries: readonly JournalEntry[]): string {
  let lines = '';
  for (const entry of entries) lines += `${JSON.stringify(entry)}\n`;
  return lines;
}

/**
 * A page as JSON text, the same bytes as `JSON.stringify(page)`, made in slices of `sliceEntries` entries
 * with a turn of the event loop between two: a page of 1,000 large entries is not one long block (five
 * readers paging at once are interleaved with every other request).
 */
export async function journalPageJson(page: JournalPageOf, sliceEntries = 100): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < page.entries.length; i += sliceEntries) {
    if (i > 0) await nextTurn();
    parts.push(JSON.stringify(page.entries.slice(i, i + sliceEntries)).slice(1, -1));
  }
  const entries = `"entries":[${parts.join(',')}]`;
  return JSON.stringify({ ...page, entries: [] }).replace('"entries":[]', () => entries);
}

// Connections whose requests are counted (`connection_seq`); the oldest are forgotten beyond it.
export const CONNECTIONS_COUNTED = 16_384;

/** Entries per slice of an NDJSON export: each slice is made, written and yielded on by itself. */
export const EXPORT_SLICE_ENTRIES = 250;

/** Each slice of a generator, made into something else only when it is asked for. */
function* mapSlices<T, U>(slices: Iterable<T>, make: (slice: T) => U): Generator<U, void, undefined> {
  for (const slice of slices) yield make(slice);
}

/**
 * The request journal: a ring of the most recent `capacity` entries, so memory stays bounded however long
 * the gateway runs.
 */
export function createJournal(initialCapacity: number) {
  const ring = createRing(initialCapacity);
  let seq = 0;
  // Requests seen per connection id, bounded. Not cleared with the journal: a connection outlives a reset,
  // and its next request is not its first.
  const perConnection = createBoundedMap<number, number>(CONNECTIONS_COUNTED);
  // Entries up to this seq have had their deferred work done by a pass of `settleRecorded` (or left the ring).
  let settledTo = 0;
  let settling: Promise<void> = Promise.resolve();
  const window = (since: number) => ring.window(since, seq);

  /** The journal empty, with `capacity` (entries up to now need no pass of `settleRecorded`). */
  const empty = (capacity: number) => {
    settledTo = seq;
    ring.reset(capacity);
  };

  return {
    /**
     * Does the deferred work (readings, exchange redaction) of every entry recorded so far and not yet
     * read, in slices of SLICE_BUDGET_MS with a turn of the event loop between two, once each: when the
     * inputs of that work change (the secret scanner's known secrets), the entries still holding the old
     * ones let go of them soon. Passes run one after another; each starts where the last one ended.
     */
    settleRecorded(): Promise<void> {
      const until = seq;
      settling = settling.then(async () => {
        await settleRecordedUpTo(window, settledTo, until);
        settledTo = Math.max(settledTo, until);
      });
      return settling;
    },

    /**
     * Records a finished request and the work left on it until it is read (its readings, its exchange's
     * redaction), as a record of bytes (record-ring.ts): the object given is read now, not kept (changing
     * it afterwards changes nothing); `time` is derived from `at` when listed, keeping this cheap.
     */
    record(fields: Omit<JournalEntry, 'seq' | 'time'>, work?: RecordedWork<EntryWork, ExchangeWork>): void {
      const entry = fields as JournalEntry;
      entry.seq = ++seq;
      entry.time = '';
      if (entry.connection !== undefined) {
        const count = (perConnection.get(entry.connection) ?? 0) + 1;
        perConnection.set(entry.connection, count);
        entry.connection_seq = count;
      }
      ring.push(entry, work);
    },

    /** Entries in recording order, oldest first; filter by agent, only after `since`, at most `limit` (newest). */
    list(filter: { agent?: AgentMatch; since?: number; limit?: number } = {}): JournalEntry[] {
      const out: JournalEntry[] = [];
      for (const entry of ring.all()) {
        if (filter.agent !== undefined && !agentMatches(filter.agent, entry.agent)) continue;
        if (filter.since !== undefined && entry.seq <= filter.since) continue;
        out.push(shown(entry));
      }
      return filter.limit !== undefined ? out.slice(-filter.limit) : out;
    },

    /**
     * A page of at most `max` (MAX_JOURNAL_PAGE) entries, oldest first, from the entry after `since`: it
     * starts at that entry (seqs are consecutive in the ring, so it is found by arithmetic, not a search),
     * so paging through a full journal of a million costs each page its own entries, not a pass over the
     * ring. With an agent filter a page looks at most MAX_JOURNAL_SCAN entries (`more` then says to page on
     * from `next_since`, the last one looked at). With `limit`: the newest `limit` (at most `max`) matching
     * entries, as `list` gives them.
     */
    page(filter: JournalFilter = {}, max = MAX_JOURNAL_PAGE): JournalPageOf {
      return { capacity: ring.capacity, dropped: ring.dropped, ...pageAfter(window, seq, filter, max) };
    },

    /**
     * `page`, for the admin API: first the page's entries whose exchange is still to be redacted are
     * redacted, SLICE_BUDGET_MS at a time with a turn of the event loop between, so a page of 1,000 entries
     * never read before (1,000 secret scans) is not one long block; then the page, as `page` gives it.
     */
    async readPage(filter: JournalFilter = {}, max = MAX_JOURNAL_PAGE): Promise<JournalPageOf> {
      await settlePageEntries(window(filter.since ?? 0), filter, max);
      return this.page(filter, max);
    },

    /**
     * The export of every entry recorded before the call (`until`: the last seq then; a snapshot of the
     * end), oldest first, as NDJSON text in slices of at most `sliceEntries` entries, each made only when it
     * is asked for. Entries recorded meanwhile are not included; entries the ring overwrote before the
     * export reached them are skipped (their seqs are missing from it). Whoever writes the slices yields
     * between them (`writeSlices`), so no slice holds the event loop longer than its own entries take.
     */
    exportSlices(
      filter: { agent?: AgentMatch; since?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
      budgetMs = SLICE_BUDGET_MS,
    ): JournalExport {
      const { until, slices } = this.entrySlices(filter, sliceEntries, budgetMs);
      return { until, slices: mapSlices(slices, ndjsonOf) };
    },

    /**
     * The entries an export holds (see `exportSlices`), as arrays of at most `sliceEntries`, none empty.
     * With `limit`: only the newest `limit` matching entries (found once, at the start).
     */
    entrySlices(
      filter: { agent?: AgentMatch; since?: number; limit?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
      budgetMs = SLICE_BUDGET_MS,
    ): { until: number; dropped: number; slices: Generator<JournalEntry[], void, undefined> } {
      const since = filter.since ?? 0;
      const from =
        filter.limit === undefined ? since : sinceForNewest(window(since), since, filter.agent, filter.limit);
      const slices = slicesAfter(window, from, seq, filter.agent, sliceEntries, budgetMs);
      return { until: seq, dropped: ring.dropped, slices };
    },

    /**
     * Every entry matching `filter` (one agent's, for the client report), read in slices of at most
     * MAX_JOURNAL_PAGE with a turn of the event loop between two, so a full journal of a million is never
     * one synchronous pass. As `page` gives them, oldest first.
     */
    async readAll(filter: { agent?: AgentMatch } = {}): Promise<JournalPageOf> {
      const until = seq;
      const entries = await readMatching(window, until, filter.agent, MAX_JOURNAL_PAGE);
      return {
        capacity: ring.capacity,
        dropped: ring.dropped,
        entries,
        more: false,
        next_since: Math.max(seq, until),
      };
    },

    clear: () => empty(ring.capacity),

    /** Changes the capacity; the journal starts empty. */
    resize: empty,

    get capacity() {
      return ring.capacity;
    },

    /** Entries overwritten since the journal last started empty: the oldest requests, of every agent. */
    get dropped() {
      return ring.dropped;
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;
