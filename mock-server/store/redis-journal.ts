// One file on purpose: the journal's record script, its stream writer (batched per tick) and its pages all
// read and write one Redis stream in one layout (fields, sealed exchanges, sequence ids); split, each would
// restate that layout.
import { createBoundedMap } from '../bounded-map.ts';
import type { JournalExchange } from '../journal/exchange-capture.ts';
import {
  CONNECTION_IDS_PER_INSTANCE,
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
import { type AgentMatch, agentMatches } from '../journal/journal-ring.ts';
import type { ExchangeScan } from '../journal/packed-exchange.ts';
import type { ExchangeWork } from '../journal/record-ring.ts';
import type { RedisConnection } from './redis-connection.ts';
import { type ExchangeSeal, SEAL_HEAD } from './redis-journal-exchange.ts';

/** Exchanges an instance keeps once it opened and redacted them (a page read again is not redacted again). */
const OPENED_KEPT = 2000;

/**
 * What one tick of an instance leaves in the store, in one script call: its journal entries and the
 * concurrency leases its finished requests give back (redis-limits.ts). Entries get the next sequence
 * numbers as their stream ids, capped at ARGV[1]; ARGV[2] is how many entries, then each entry's JSON and
 * its sealed exchange ('' for none: redis-journal-exchange.ts), then each lease given back: its set's key
 * and its id (one Redis, not a Cluster: the lease sets are named here, as every admin script names its keys).
 */
const RECORD_SCRIPT = `
local n = tonumber(ARGV[2])
local seq = 0
if n > 0 then seq = redis.call('INCRBY', KEYS[2], n) - n end
for i = 1, n do
  seq = seq + 1
  local sealed = ARGV[2 * i + 2]
  if sealed == '' then
    redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], seq .. '-0', 'e', ARGV[2 * i + 1])
  else
    redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], seq .. '-0', 'e', ARGV[2 * i + 1], 'x', sealed)
  end
end
for i = 2 * n + 3, #ARGV, 2 do
  redis.call('ZREM', ARGV[i], ARGV[i + 1])
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

/** The stream's keys and commands, as every unit below reads them. */
interface JournalStream {
  connection: RedisConnection;
  stream: string;
  seqKey: string;
  clearedKey: string;
  /** Entries (JSON and seal, in turn) and leases given back (set key and id, in turn), in one call. */
  record(capacity: number, entries: string[], released: string[]): Promise<number>;
  clear(): Promise<number>;
  /** The entry's exchange opened and redacted, if it came sealed (see `sealedExchanges`). */
  reveal(entry: JournalEntry): JournalEntry;
}

type RawEntry = [string, string[]];

function journalStream(
  connection: RedisConnection,
  reveal: (entry: JournalEntry) => JournalEntry,
): JournalStream {
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
  return {
    connection,
    stream,
    seqKey,
    clearedKey,
    record: (capacity, entries, released) =>
      cmd.agwRecord(stream, seqKey, capacity, entries.length / 2, ...entries, ...released),
    clear: () => cmd.agwClear(stream, seqKey, clearedKey),
    reveal,
  };
}

/** Where an entry read from the stream holds its sealed exchange until it is revealed (not in its JSON). */
const SEALED = Symbol('sealed exchange');
type ReadEntry = JournalEntry & { [SEALED]?: string };

/**
 * A stream entry as the journal gives it: its seq from the stream id (`time` from `at` and its exchange
 * opened once it is kept: `finished`).
 */
function entryOf([id, fields]: RawEntry): JournalEntry {
  const entry = JSON.parse(fields[1] as string) as ReadEntry;
  entry.seq = Number.parseInt(id, 10);
  if (fields[2] === 'x') entry[SEALED] = fields[3] as string;
  return entry;
}

const seqOf = (raw: RawEntry[], index: number) => Number.parseInt((raw[index] as RawEntry)[0], 10);

const matcher = (agent: AgentMatch) => (entry: JournalEntry) => agentMatches(agent, entry.agent);

/**
 * An instance's entries as the shared stream holds them. Real times are per process (performance.now()):
 * shifted to the epoch they compare across processes (on one machine, or machines whose clocks agree), so a
 * retry loop that hops between instances is one loop. Connection ids are per process: numbered apart per
 * instance so two instances' connections never merge; a connection lives on one instance, so its requests
 * are counted here, as the in-memory journal does.
 */
export function createEntrySharing(instance: number) {
  const origin = Math.round(performance.timeOrigin * 100) / 100;
  const shift = (ms: number) => Math.round((ms + origin) * 100) / 100;
  const connectionBase = instance * CONNECTION_IDS_PER_INSTANCE;
  const perConnection = createBoundedMap<number, number>(CONNECTIONS_COUNTED);
  return (fields: Omit<JournalEntry, 'seq' | 'time'>): Omit<JournalEntry, 'seq' | 'time'> => {
    fields.real_ms = shift(fields.real_ms);
    if (fields.written_ms !== undefined) fields.written_ms = shift(fields.written_ms);
    if (fields.connection !== undefined) {
      const count = (perConnection.get(fields.connection) ?? 0) + 1;
      perConnection.set(fields.connection, count);
      (fields as JournalEntry).connection_seq = count;
      fields.connection += connectionBase;
    }
    // In-process answer counts are per instance too: only compared within one.
    if (fields.answer_order !== undefined) fields.delivery_instance = instance;
    if (fields.connection_opened_ms !== undefined)
      fields.connection_opened_ms = shift(fields.connection_opened_ms);
    if (fields.stall_runs !== undefined)
      fields.stall_runs = fields.stall_runs.map(([start, end, stalled, longest]) => [
        shift(start),
        shift(end),
        stalled,
        longest,
      ]);
    return fields;
  };
}

/**
 * The write side: entries go out before this tick ends, so an entry is in Redis before its client can have
 * reacted to the answer on another instance: the journal's order follows cause and effect across
 * instances. Batching across ticks (setImmediate) cost a tenth of the CPU but reordered exactly those
 * entries under load; entries of the same tick still go in one script call. A failed write is logged once
 * per outage. `written` is the last write, so a read on this instance waits for this instance's entries.
 */
function createStreamWriter(journal: JournalStream, capacity: () => number) {
  let batch: string[] = [];
  let released: string[] = [];
  let written: Promise<unknown> = Promise.resolve();
  let failing = false;
  const flush = () => {
    if (batch.length === 0 && released.length === 0) return;
    const entries = batch;
    const leases = released;
    batch = [];
    released = [];
    written = journal
      .record(capacity(), entries, leases)
      .then(() => {
        failing = false;
      })
      .catch((error) => {
        if (failing) return;
        failing = true;
        journal.connection.options.log(
          `journal entries are being lost: the state store failed (${String(error)})`,
        );
      });
  };
  return {
    /** An entry's JSON and its sealed exchange ('' for none). */
    append(text: string, sealed: string) {
      if (batch.length === 0 && released.length === 0) process.nextTick(flush);
      batch.push(text, sealed);
      if (batch.length >= 1000) flush();
    },
    /** A concurrency lease given back (its set's key and id): sent with the tick's entries. */
    release(key: string, lease: string) {
      if (batch.length === 0 && released.length === 0) process.nextTick(flush);
      released.push(key, lease);
      if (released.length >= 1000) flush();
    },
    /** Sends what waits now if it gives leases back (an admission must see them given back). */
    sendReleases(): void {
      if (released.length > 0) flush();
    },
    /** This instance's entries written (another instance's are written within a tick). */
    settled(): Promise<unknown> {
      flush();
      return written;
    },
  };
}

/** The stream's last seq and how many entries it dropped (capped away, not cleared), after `settled`. */
async function streamState(journal: JournalStream, settled: Promise<unknown>) {
  const { connection, seqKey, clearedKey, stream } = journal;
  const { redis } = connection;
  const [seq, cleared, length] = await connection.bounded(
    settled.then(() => Promise.all([redis.get(seqKey), redis.get(clearedKey), redis.xlen(stream)])),
  );
  const last = Number(seq ?? 0);
  return { last, dropped: Math.max(0, last - Number(cleared ?? 0) - length) };
}

/**
 * The newest `wanted` matching entries after `since`: XREVRANGE slices from `upper` down (each a round
 * trip), each entry handed to `take` until it says it has enough. Returns nothing: `take` keeps them.
 */
async function readBackwards(
  journal: JournalStream,
  upper: string,
  since: number,
  take: (raw: RawEntry) => boolean,
): Promise<void> {
  const { connection, stream } = journal;
  for (;;) {
    const raw = (await connection.bounded(
      connection.redis.xrevrange(stream, upper, `${since + 1}-0`, 'COUNT', JOURNAL_SLICE),
    )) as RawEntry[];
    for (const entry of raw) if (take(entry)) return;
    if (raw.length < JOURNAL_SLICE) return;
    upper = `${seqOf(raw, raw.length - 1) - 1}-0`;
  }
}

/**
 * A page of the journal, as the in-memory journal's `page` gives it: at most `max` entries, read from the
 * stream in slices of JOURNAL_SLICE (each a round trip: the event loop is free between them).
 */
async function readPage(
  journal: JournalStream,
  settled: Promise<unknown>,
  capacity: number,
  filter: JournalFilter,
  max: number,
): Promise<JournalPage> {
  const { last, dropped } = await streamState(journal, settled);
  const since = filter.since ?? 0;
  const matches = matcher(filter.agent);
  const entries: JournalEntry[] = [];
  const base = { capacity, dropped };
  if (filter.limit !== undefined) {
    // The newest: backwards from the end, down to `since`.
    const wanted = Math.min(filter.limit, max);
    if (wanted > 0)
      await readBackwards(journal, '+', since, (raw) => {
        const entry = entryOf(raw);
        if (matches(entry)) entries.push(finished(journal, entry));
        return entries.length >= wanted;
      });
    entries.reverse();
    return { ...base, entries, more: false, next_since: Math.max(last, since) };
  }
  const { more, lastLooked } = await readForwards(journal, since, last, (entry) => {
    if (matches(entry)) entries.push(finished(journal, entry));
    return entries.length >= max;
  });
  return { ...base, entries, more, next_since: more ? lastLooked : Math.max(last, since) };
}

/** An entry a reader keeps: its time, and its exchange redacted (the work left on it, done once read). */
const finished = (journal: JournalStream, entry: JournalEntry) => {
  entry.time = new Date(entry.at).toISOString();
  return journal.reveal(entry);
};

/**
 * Entries after `since` in XRANGE slices, each handed to `take` until it says it has enough (`more`: some
 * were left). A page of an agent with few requests ends after MAX_JOURNAL_SCAN entries looked at, as in memory.
 */
async function readForwards(
  journal: JournalStream,
  since: number,
  last: number,
  take: (entry: JournalEntry) => boolean,
): Promise<{ more: boolean; lastLooked: number }> {
  const { connection, stream } = journal;
  let lower = `${since + 1}-0`;
  let lastLooked = since;
  for (;;) {
    const raw = (await connection.bounded(
      connection.redis.xrange(stream, lower, '+', 'COUNT', JOURNAL_SLICE),
    )) as RawEntry[];
    let full = false;
    let looked = 0;
    for (const entry of raw) {
      if (full) break;
      looked += 1;
      full = take(entryOf(entry));
    }
    if (looked > 0) lastLooked = seqOf(raw, looked - 1);
    if (looked < raw.length) return { more: true, lastLooked };
    if (raw.length < JOURNAL_SLICE) return { more: false, lastLooked };
    if (full || lastLooked - since >= MAX_JOURNAL_SCAN) return { more: lastLooked < last, lastLooked };
    lower = `${lastLooked + 1}-0`;
  }
}

/**
 * The entries an export holds, as the in-memory journal's `entrySlices`: arrays read by XRANGE slices of
 * `sliceEntries`, none empty. With `limit`, the newest `limit` matches are found first by XREVRANGE slices
 * from the end (each a round trip).
 */
async function readEntrySlices(
  journal: JournalStream,
  settled: Promise<unknown>,
  filter: { agent?: AgentMatch; since?: number; limit?: number },
  sliceEntries: number,
) {
  const matches = matcher(filter.agent);
  const { last: until, dropped } = await streamState(journal, settled);
  let from = filter.since ?? 0;
  const limit = filter.limit;
  if (limit !== undefined) {
    let found = 0;
    await readBackwards(journal, `${until}-0`, from, (raw) => {
      if (!matches(entryOf(raw)) || ++found < limit) return false;
      from = Number.parseInt(raw[0], 10) - 1;
      return true;
    });
  }
  const { connection, stream } = journal;
  async function* slices() {
    let since = from;
    while (since < until) {
      const raw = (await connection.bounded(
        connection.redis.xrange(stream, `${since + 1}-0`, `${until}-0`, 'COUNT', sliceEntries),
      )) as RawEntry[];
      const entries = raw
        .map(entryOf)
        .filter(matches)
        .map((entry) => finished(journal, entry));
      if (entries.length > 0) yield entries;
      if (raw.length < sliceEntries) return;
      since = seqOf(raw, raw.length - 1);
    }
  }
  return { until, dropped, slices: slices() };
}

/**
 * The journal as a capped Redis Stream shared by every instance: one sequence, so `since` paging, the
 * admin API and client reports see every instance's requests in the order they were recorded.
 * Recording does not wait (the answer is already written). Reads reject with the store's 503 when Redis
 * fails, within one store.timeout_ms per slice.
 */
export function createRedisJournal(
  connection: RedisConnection,
  initialCapacity: number,
  instance: number,
  seal?: ExchangeSeal,
) {
  // The scan a reader redacts sealed exchanges with: the secrets this instance knows (`useScan`).
  let scan: (() => ExchangeScan) | undefined;
  // Exchanges opened here, by their seal's head (its nonce: unique, whatever happens to the seqs).
  const opened = createBoundedMap<string, JournalExchange | undefined>(OPENED_KEPT);
  const reveal = (entry: JournalEntry) => {
    const sealed = (entry as ReadEntry)[SEALED];
    if (sealed === undefined) return entry;
    delete (entry as ReadEntry)[SEALED];
    const head = sealed.slice(0, SEAL_HEAD);
    let exchange = opened.get(head);
    if (exchange === undefined && seal && scan) {
      exchange = seal.open(sealed, scan());
      opened.set(head, exchange);
    }
    if (exchange) entry.exchange = exchange;
    return entry;
  };
  const journal = journalStream(connection, reveal);
  let capacity = initialCapacity;
  const share = createEntrySharing(instance);
  const writer = createStreamWriter(journal, () => capacity);
  const unavailable = (error: unknown) => {
    throw connection.unavailable(error);
  };

  return {
    /**
     * Records a finished request. Its exchange goes sealed, redacted by its first reader (as in memory);
     * one whose redaction cannot travel is redacted now.
     */
    record(fields: Omit<JournalEntry, 'seq' | 'time'>, exchange?: ExchangeWork): void {
      const sealed = exchange && seal?.seal(exchange);
      if (exchange && sealed === undefined) (fields as JournalEntry).exchange = exchange.build();
      writer.append(JSON.stringify(share(fields)), sealed ?? '');
    },

    /**
     * Gives a concurrency lease back with this tick's entries, in their one script call (redis-limits.ts
     * sends its releases here: a request's round trips are its admission, and a share of one per tick).
     */
    release(key: string, lease: string): void {
      writer.release(key, lease);
    },
    /**
     * Sends the leases given back so far at once (with the entries waiting), before an admission this tick
     * (redis-limits.ts): a slot given back is free for the next request, as in memory.
     */
    sendReleases(): void {
      writer.sendReleases();
    },

    /** The scan sealed exchanges are redacted with when read here (the gateway's secret scanner). */
    useScan(next: () => ExchangeScan) {
      scan = next;
    },

    /** A page of the journal, at most `max` entries (see readPage). */
    page(filter: JournalFilter = {}, max = MAX_JOURNAL_PAGE): Promise<JournalPage> {
      return readPage(journal, writer.settled(), capacity, filter, max).catch(unavailable);
    },

    /**
     * The NDJSON export, as the in-memory journal's: the entries up to the last seq when it is asked for
     * (read before the answer starts, so a store down is a 503), then slices each read only when the one
     * before is written: memory holds one slice per reader. A slice that fails (store gone midway) throws:
     * the writer cuts the transfer.
     */
    async exportSlices(
      filter: { agent?: AgentMatch; since?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
    ): Promise<JournalExport> {
      const { until, slices } = await this.entrySlices(filter, sliceEntries);
      async function* text() {
        for await (const entries of slices) yield ndjsonOf(entries);
      }
      return { until, slices: text() };
    },

    /** The entries an export holds (see readEntrySlices). */
    entrySlices(
      filter: { agent?: AgentMatch; since?: number; limit?: number } = {},
      sliceEntries = EXPORT_SLICE_ENTRIES,
    ): Promise<{ until: number; dropped: number; slices: AsyncGenerator<JournalEntry[], void, undefined> }> {
      return readEntrySlices(journal, writer.settled(), filter, sliceEntries).catch(unavailable);
    },

    /**
     * Every matching entry (the client report of one agent), page by page: each page a few XRANGE slices,
     * the event loop free between them.
     */
    async readAll(filter: { agent?: AgentMatch } = {}): Promise<JournalPage> {
      let page = await this.page(filter);
      const entries = [...page.entries];
      while (page.more) {
        page = await this.page({ ...filter, since: page.next_since });
        for (const entry of page.entries) entries.push(entry);
      }
      return { ...page, entries };
    },

    async clear(): Promise<void> {
      opened.clear();
      await connection.bounded(journal.clear()).catch(unavailable);
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
