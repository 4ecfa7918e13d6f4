import { createBoundedMap } from '../bounded-map.ts';
import {
  CONNECTIONS_COUNTED,
  EXPORT_SLICE_ENTRIES,
  type JournalEntry,
  type JournalExport,
  type JournalFilter,
  type JournalPageOf,
  MAX_JOURNAL_PAGE,
  MAX_JOURNAL_SCAN,
  ndjsonOf,
} from '../journal/journal.ts';
import type { RedisConnection } from './redis-connection.ts';

/** Appends entries (ARGV[2..]) with the next sequence numbers as their stream ids, capped at ARGV[1]. */
const RECORD_SCRIPT = `
local seq = 0
for i = 2, #ARGV do
  seq = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], seq .. '-0', 'e', ARGV[i])
end
return seq
`;
/** Empties the journal; the sequence goes on (clients page with `since`), `dropped` counts from here. */
const CLEAR_SCRIPT = `
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[3], redis.call('GET', KEYS[2]) or '0')
return 1
`;

/** A page of the journal as the admin API and the client report read it. */
export type JournalPage = JournalPageOf;

/** Entries read from the stream per round trip. */
export const JOURNAL_SLICE = 1000;

/**
 * The journal as a capped Redis Stream shared by every instance: one sequence, so `since` paging, the
 * admin API and client reports see every instance's requests in the order they were recorded.
 * Recording does not wait (the answer is already written): the entries of a tick are sent together, in one
 * script call, before the tick ends. A failed write is logged once per outage.
 */
export function createRedisJournal(connection: RedisConnection, initialCapacity: number, instance: number) {
  // Real times are per process (performance.now()); shifted to the epoch they compare across processes (on
  // one machine, or machines whose clocks agree), so a retry loop that hops between instances is one loop.
  const origin = Math.round(performance.timeOrigin * 100) / 100;
  // Connection ids are per process: numbered apart per instance so two instances' connections never merge.
  const connectionBase = instance * 2 ** 32;
  const perConnection = createBoundedMap<number, number>(CONNECTIONS_COUNTED);
  const { redis } = connection;
  const stream = connection.key('journal');
  const seqKey = connection.key('journal:seq');
  const clearedKey = connection.key('journal:cleared');
  redis.defineCommand('agwRecord', { numberOfKeys: 2, lua: RECORD_SCRIPT });
  redis.defineCommand('agwClear', { numberOfKeys: 3, lua: CLEAR_SCRIPT });
  const cmd = redis as unknown as {
    agwRecord(...args: (string | number)[]): Promise<number>;
    agwClear(...args: string[]): Promise<number>;
  };
  let capacity = initialCapacity;
  let failing = false;
  // Entries go out before this tick ends, so an entry is in Redis before its client can have reacted to
  // the answer on another instance: the journal's order follows cause and effect across instances.
  // Batching across ticks (setImmediate) cost a tenth of the CPU but reordered exactly those entries under
  // load; entries of the same tick still go in one script call.
  let batch: string[] = [];
  // The last write, so a read on this instance waits for this instance's entries.
  let written: Promise<unknown> = Promise.resolve();
  const flush = () => {
    if (batch.length === 0) return;
    const entries = batch;
    batch = [];
    written = cmd
      .agwRecord(stream, seqKey, capacity, ...entries)
      .then(() => {
        failing = false;
      })
      .catch((error) => {
        if (failing) return;
        failing = true;
        connection.options.log(`journal entries are being lost: the state store failed (${String(error)})`);
      });
  };

  return {
    record(fields: Omit<JournalEntry, 'seq' | 'time'>): void {
      fields.real_ms = Math.round((fields.real_ms + origin) * 100) / 100;
      if (fields.written_ms !== undefined)
        fields.written_ms = Math.round((fields.written_ms + origin) * 100) / 100;
      if (fields.connection !== undefined) {
        // A connection lives on one instance, so its requests are counted here, as the in-memory journal does.
        const count = (perConnection.get(fields.connection) ?? 0) + 1;
        perConnection.set(fields.connection, count);
        (fields as JournalEntry).connection_seq = count;
        fields.connection += connectionBase;
      }
      // In-process answer counts are per instance too: only compared within one.
      if (fields.answer_order !== undefined) fields.delivery_instance = instance;
      if (fields.connection_opened_ms !== undefined)
        fields.connection_opened_ms = Math.round((fields.connection_opened_ms + origin) * 100) / 100;
      if (batch.length === 0) process.nextTick(flush);
      batch.push(JSON.stringify(fields));
      if (batch.length >= 500) flush();
    },

    /**
     * A page of the journal, as the in-memory journal's `page` gives it: at most `max` entries, read from
     * the stream in slices of JOURNAL_SLICE (each a round trip: the event loop is free between them).
     * Redis errors reject (503 for the caller), within one store.timeout_ms per slice.
     */
    async page(filter: JournalFilter = {}, max = MAX_JOURNAL_PAGE): Promise<JournalPage> {
      // This instance's entries not yet written go first (another instance's are written within a tick).
      flush();
      try {
        const [seq, cleared, length] = await connection.bounded(
          written.then(() => Promise.all([redis.get(seqKey), redis.get(clearedKey), redis.xlen(stream)])),
        );
        const last = Number(seq ?? 0);
        const since = filter.since ?? 0;
        const entries: JournalEntry[] = [];
        const matches = (entry: JournalEntry) => filter.agent === undefined || entry.agent === filter.agent;
        const take = (raw: [string, string[]][], into: JournalEntry[], wanted: number) => {
          let looked = 0;
          for (const [id, fields] of raw) {
            if (into.length >= wanted) break;
            looked += 1;
            const entry = JSON.parse(fields[1] as string) as JournalEntry;
            entry.seq = Number.parseInt(id, 10);
            if (!matches(entry)) continue;
            entry.time = new Date(entry.at).toISOString();
            into.push(entry);
          }
          return looked;
        };
        const base = { capacity, dropped: Math.max(0, last - Number(cleared ?? 0) - length) };
        if (filter.limit !== undefined) {
          // The newest: backwards from the end, down to `since`.
          const wanted = Math.min(filter.limit, max);
          let upper = '+';
          while (entries.length < wanted) {
            const raw = await connection.bounded(
              redis.xrevrange(stream, upper, `${since + 1}-0`, 'COUNT', JOURNAL_SLICE),
            );
            take(raw, entries, wanted);
            if (raw.length < JOURNAL_SLICE) break;
            upper = `${Number.parseInt((raw[raw.length - 1] as [string, string[]])[0], 10) - 1}-0`;
          }
          entries.reverse();
          return { ...base, entries, more: false, next_since: Math.max(last, since) };
        }
        let lower = `${since + 1}-0`;
        let lastLooked = since;
        let more = false;
        for (;;) {
          const raw = await connection.bounded(redis.xrange(stream, lower, '+', 'COUNT', JOURNAL_SLICE));
          const looked = take(raw, entries, max);
          if (looked > 0) lastLooked = Number.parseInt((raw[looked - 1] as [string, string[]])[0], 10);
          if (looked < raw.length) {
            more = true;
            break;
          }
          if (raw.length < JOURNAL_SLICE) break;
          // A page of an agent with few requests ends after MAX_JOURNAL_SCAN entries looked at, as in memory.
          if (entries.length >= max || lastLooked - since >= MAX_JOURNAL_SCAN) {
            more = lastLooked < last;
            break;
          }
          lower = `${lastLooked + 1}-0`;
        }
        return { ...base, entries, more, next_since: more ? lastLooked : Math.max(last, since) };
      } catch (error) {
        throw connection.unavailable(error);
      }
    },

    /**
     * The NDJSON export, as the in-memory journal's: the entries up to the last seq when it is asked for
     * (read before the answer starts, so a store down is a 503), then XRANGE slices of `sliceEntries`, each
     * read only when the one before is written: memory holds one slice per reader. A slice that fails
     * (store gone midway) throws: the writer cuts the transfer.
     */
    async exportSlices(
      filter: { agent?: string; since?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
    ): Promise<JournalExport> {
      const { until, slices } = await this.entrySlices(filter, sliceEntries);
      async function* text() {
        for await (const entries of slices) {
          yield ndjsonOf(entries);
        }
      }
      return { until, slices: text() };
    },

    /**
     * The entries an export holds, as the in-memory journal's `entrySlices`: arrays read by XRANGE slices
     * of `sliceEntries`, none empty. With `limit`, the newest `limit` matches are found first by XREVRANGE
     * slices from the end (each a round trip).
     */
    async entrySlices(
      filter: { agent?: string; since?: number; limit?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
    ): Promise<{ until: number; dropped: number; slices: AsyncGenerator<JournalEntry[], void, undefined> }> {
      flush();
      const parse = (id: string, fields: string[]) => {
        const entry = JSON.parse(fields[1] as string) as JournalEntry;
        entry.seq = Number.parseInt(id, 10);
        return entry;
      };
      const matches = (entry: JournalEntry) => filter.agent === undefined || entry.agent === filter.agent;
      let until: number;
      let dropped: number;
      let from = filter.since ?? 0;
      try {
        const [seq, cleared, length] = await connection.bounded(
          written.then(() => Promise.all([redis.get(seqKey), redis.get(clearedKey), redis.xlen(stream)])),
        );
        until = Number(seq ?? 0);
        dropped = Math.max(0, until - Number(cleared ?? 0) - length);
        if (filter.limit !== undefined) {
          let upper = `${until}-0`;
          let found = 0;
          for (let done = false; !done; ) {
            const raw = await connection.bounded(
              redis.xrevrange(stream, upper, `${from + 1}-0`, 'COUNT', JOURNAL_SLICE),
            );
            for (const [id, fields] of raw) {
              if (!matches(parse(id, fields)) || ++found < filter.limit) continue;
              from = Number.parseInt(id, 10) - 1;
              done = true;
              break;
            }
            if (raw.length < JOURNAL_SLICE) break;
            upper = `${Number.parseInt((raw[raw.length - 1] as [string, string[]])[0], 10) - 1}-0`;
          }
        }
      } catch (error) {
        throw connection.unavailable(error);
      }
      async function* slices() {
        let since = from;
        while (since < until) {
          const raw = await connection.bounded(
            redis.xrange(stream, `${since + 1}-0`, `${until}-0`, 'COUNT', sliceEntries),
          );
          const entries: JournalEntry[] = [];
          for (const [id, fields] of raw) {
            const entry = parse(id, fields);
            if (!matches(entry)) continue;
            entry.time = new Date(entry.at).toISOString();
            entries.push(entry);
          }
          if (entries.length > 0) yield entries;
          if (raw.length < sliceEntries) return;
          since = Number.parseInt((raw[raw.length - 1] as [string, string[]])[0], 10);
        }
      }
      return { until, dropped, slices: slices() };
    },

    /**
     * Every matching entry (the client report of one agent), page by page: each page a few XRANGE slices,
     * the event loop free between them.
     */
    async readAll(filter: { agent?: string } = {}): Promise<JournalPage> {
      let page = await this.page(filter);
      const entries = [...page.entries];
      while (page.more) {
        page = await this.page({ ...filter, since: page.next_since });
        for (const entry of page.entries) entries.push(entry);
      }
      return { ...page, entries };
    },

    async clear(): Promise<void> {
      try {
        await connection.bounded(cmd.agwClear(stream, seqKey, clearedKey));
      } catch (error) {
        throw connection.unavailable(error);
      }
    },

    resize(next: number) {
      capacity = next;
    },
    get capacity() {
      return capacity;
    },
  };
}

export type RedisJournal = ReturnType<typeof createRedisJournal>;
