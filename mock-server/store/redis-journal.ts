import { createBoundedMap } from '../bounded-map.ts';
import { CONNECTIONS_COUNTED, type JournalEntry } from '../journal.ts';
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
export interface JournalPage {
  capacity: number;
  dropped: number;
  entries: JournalEntry[];
}

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

    /** Entries oldest first; filtered like the in-memory journal. Redis errors reject (503 for the caller). */
    async page(filter: { agent?: string; since?: number; limit?: number } = {}): Promise<JournalPage> {
      // This instance's entries not yet written go first (another instance's are written within a tick).
      flush();
      let raw: [string, string[]][];
      let seq: string | null;
      let cleared: string | null;
      let length: number;
      try {
        // One deadline for the wait on this instance's last write and the reads.
        [raw, seq, cleared, length] = await connection.bounded(
          written.then(() =>
            Promise.all([
              redis.xrange(stream, filter.since !== undefined ? `${filter.since + 1}-0` : '-', '+'),
              redis.get(seqKey),
              redis.get(clearedKey),
              redis.xlen(stream),
            ]),
          ),
        );
      } catch (error) {
        throw connection.unavailable(error);
      }
      const entries: JournalEntry[] = [];
      for (const [id, fields] of raw) {
        const entry = JSON.parse(fields[1] as string) as JournalEntry;
        if (filter.agent !== undefined && entry.agent !== filter.agent) continue;
        entry.seq = Number.parseInt(id, 10);
        entry.time = new Date(entry.at).toISOString();
        entries.push(entry);
      }
      return {
        capacity,
        dropped: Math.max(0, Number(seq ?? 0) - Number(cleared ?? 0) - length),
        entries: filter.limit !== undefined ? entries.slice(-filter.limit) : entries,
      };
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
