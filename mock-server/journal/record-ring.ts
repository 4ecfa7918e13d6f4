import type { ScanCaller } from '../secrets/known-secrets.ts';
import { type Recordable, type RecordedWork, readEntry, writeEntry } from './entry-record.ts';
import type { ExchangePieces, JournalExchange } from './exchange-capture.ts';
import type { JournalEntry, JournalNote } from './journal-entry.ts';
import { createRefTable, RecordReader, RecordWriter, type RefTable } from './record-bytes.ts';

/*
 * The ring the journal holds its entries in, as records (issue 35, point 2): each entry and the work left on
 * it are bytes on slabs of 64 KiB (entry-record.ts), its seq and agent in columns for the readers' filters.
 * Nothing of an unread entry is an object of the collector's heap, so a young-generation collection copies
 * nothing of the journal and the old generation does not fill with entries the ring lets go of: the ring of
 * objects it replaces promoted about 940 bytes a request at 2,500 req/s and made a full collection every
 * second (docs/operators.md). An entry is made an object each time it is read, for that reader only; its first
 * read does the work left on it (its readings, its exchange's redaction) and writes the entry back as a
 * record without work, so that work is done once and a journal that was read holds no more objects than one
 * that was not (a dashboard reading the newest entries every second kept them alive otherwise).
 */

const SLAB_BYTES = 64 * 1024;
const SPARE_SLABS = 4;
// Columns start this long and double until the capacity: a journal of a million costs its columns only
// once it holds that many.
const FIRST_COLUMNS = 1024;

interface Slab {
  readonly serial: number;
  readonly bytes: Buffer;
  used: number;
  /** Records on it still held. */
  live: number;
  /** The shared values its records refer to, each once (held by the ref table while the slab is). */
  readonly refs: number[];
}

/**
 * Where the records are: slabs by serial, the current one filled in place, each let go with its last record
 * and its bytes used again for a slab opened later (a few kept spare). A slab outlives young collections
 * (the ring holds its records), so a new one each time was bytes outside the heap that only a full
 * collection frees: measured at 2,500 req/s, 6-8 MB a second of them made V8 run a full collection every
 * second. Records are read back as copies (`RecordReader`), so nothing made from a record sees the bytes
 * of a slab used again.
 */
function createSlabs(refs: RefTable) {
  const slabs = new Map<number, Slab>();
  const spare: Buffer[] = [];
  // For each shared value's id, the last slab that holds it: a slab adopts an id once, without a Set.
  const heldBy: number[] = [];
  let serial = 0;
  let current: Slab | undefined;
  const open = (size: number): Slab => {
    const slab: Slab = {
      serial: ++serial,
      bytes: (size === SLAB_BYTES ? spare.pop() : undefined) ?? Buffer.allocUnsafeSlow(size),
      used: 0,
      live: 0,
      refs: [],
    };
    slabs.set(slab.serial, slab);
    return slab;
  };
  const letGo = (slab: Slab) => {
    refs.release(slab.refs);
    slabs.delete(slab.serial);
    if (slab.bytes.length === SLAB_BYTES && spare.length < SPARE_SLABS) spare.push(slab.bytes);
  };
  return {
    /** Copies a record onto a slab: its slab's serial and its offset there. */
    place(bytes: Buffer, used: readonly number[]): { slab: number; offset: number } {
      let slab: Slab;
      if (bytes.length > SLAB_BYTES / 8) slab = open(bytes.length);
      else {
        if (!current || current.used + bytes.length > SLAB_BYTES) {
          // A full slab whose records are all gone already (a small ring) goes as it stops being filled.
          const full = current;
          current = open(SLAB_BYTES);
          if (full && full.live === 0) letGo(full);
        }
        slab = current;
      }
      const offset = slab.used;
      bytes.copy(slab.bytes, offset);
      slab.used += bytes.length;
      slab.live += 1;
      for (const id of used) {
        if (heldBy[id] === slab.serial) continue;
        heldBy[id] = slab.serial;
        slab.refs.push(id);
        refs.hold(id);
      }
      return { slab: slab.serial, offset };
    },
    bytes(slab: number, offset: number, length: number): Buffer {
      return (slabs.get(slab) as Slab).bytes.subarray(offset, offset + length);
    },
    /** A record let go: its slab with it, once none of its records is held (the current one is kept). */
    drop(serialOf: number): void {
      const slab = slabs.get(serialOf);
      if (!slab || --slab.live > 0 || slab === current) return;
      letGo(slab);
    },
    get count() {
      return slabs.size;
    },
  };
}

/** An entry's readings, kept as bytes until its first read applies them (`pipeline/entry-readings.ts`). */
export interface EntryWork extends Recordable {
  apply(entry: JournalNote): void;
}
/** An entry's exchange, kept as bytes until its first read redacts it (`packed-exchange.ts`). */
export interface ExchangeWork extends Recordable {
  build(): JournalExchange;
  /** Its pieces for a shared store to keep sealed until read (`CapturedExchange.portable`), if they can travel. */
  portable?(): { pieces: ExchangePieces; keep: number; own: ScanCaller } | undefined;
}
/** The work left on an entry, done at its first read. */
type Work = RecordedWork<EntryWork, ExchangeWork>;

/** A ring with nothing in it, for `capacity` entries: its columns grow as it fills (`grow`). */
function emptyRing(capacity: number) {
  const refs = createRefTable();
  return {
    capacity,
    refs,
    writer: new RecordWriter(refs),
    slabs: createSlabs(refs),
    /** Slots filled (the capacity, once the ring has wrapped). */
    length: 0,
    slabOf: new Int32Array(0),
    offsets: new Int32Array(0),
    lengths: new Int32Array(0),
    seqs: new Float64Array(0),
    agents: new Int32Array(0),
    next: 0,
    dropped: 0,
  };
}

/**
 * The ring: seqs are consecutive in it, so the entry after a seq is found by arithmetic, not a search.
 * `window(since)`: the entries held, oldest first, `at(i)` for i in [start, size), `start` the first after
 * `since`; `seqAt` and `agentAt` read a slot's columns without making its entry.
 */
export function createRing(initialCapacity: number) {
  let s = emptyRing(initialCapacity);

  /** Room for one more record while the ring has not wrapped yet (columns double up to the capacity). */
  const grow = () => {
    if (s.length < s.slabOf.length || s.slabOf.length >= s.capacity) return;
    const size = Math.min(s.capacity, Math.max(FIRST_COLUMNS, s.slabOf.length * 2));
    const widen = <T extends Int32Array | Float64Array>(old: T, make: (n: number) => T) => {
      const wider = make(size);
      wider.set(old);
      return wider;
    };
    s.slabOf = widen(s.slabOf, (n) => new Int32Array(n));
    s.offsets = widen(s.offsets, (n) => new Int32Array(n));
    s.lengths = widen(s.lengths, (n) => new Int32Array(n));
    s.seqs = widen(s.seqs, (n) => new Float64Array(n));
    s.agents = widen(s.agents, (n) => new Int32Array(n));
  };

  /** Writes an entry (and the work left on it) as the record of a slot, on the current slab. */
  const write = (slot: number, entry: JournalEntry, work?: Work) => {
    s.writer.begin();
    writeEntry(s.writer, entry, work);
    const { bytes, used } = s.writer.take();
    const { slab, offset } = s.slabs.place(bytes, used);
    s.slabOf[slot] = slab;
    s.offsets[slot] = offset;
    s.lengths[slot] = bytes.length;
  };

  /**
   * The entry of a slot, a new object for the caller. At its first read its work is done and the entry,
   * done, is written back as the slot's record (its old record let go with its slab): the work is done once
   * however often the entry is read. Work that fails throws to this reader and stays for the next.
   */
  const entryAt = (slot: number): JournalEntry => {
    const reader = new RecordReader(
      s.slabs.bytes(s.slabOf[slot] as number, s.offsets[slot] as number, s.lengths[slot] as number),
      s.refs,
    );
    const { entry, work } = readEntry<Work['readings'], Work['exchange']>(reader);
    if (!work.readings && !work.exchange) return entry;
    work.readings?.apply(entry);
    if (work.exchange) entry.exchange = work.exchange.build();
    const held = s.slabOf[slot] as number;
    write(slot, entry);
    s.slabs.drop(held);
    return entry;
  };

  return {
    get capacity() {
      return s.capacity;
    },
    /** Entries overwritten since the ring last started empty. */
    get dropped() {
      return s.dropped;
    },
    /** Slabs held (for tests: they are let go with their records). */
    get slabs() {
      return s.slabs.count;
    },
    /** Shared values held (for tests). */
    get refs() {
      return s.refs.size;
    },
    push(entry: JournalEntry, work?: Work) {
      grow();
      if (s.next < s.length) {
        s.dropped += 1;
        s.slabs.drop(s.slabOf[s.next] as number);
      }
      write(s.next, entry, work);
      s.seqs[s.next] = entry.seq;
      s.agents[s.next] = entry.agent === undefined ? -1 : s.refs.idOf(entry.agent);
      if (s.next === s.length) s.length += 1;
      s.next = (s.next + 1) % s.capacity;
    },
    /** Every entry held, oldest first. */
    *all(): Generator<JournalEntry> {
      const oldest = s.length === s.capacity ? s.next : 0;
      for (let i = 0; i < s.length; i++) yield entryAt((oldest + i) % s.capacity);
    },
    window(since: number, lastSeq: number): RingWindow {
      const size = s.length;
      const oldest = size === s.capacity ? s.next : 0;
      const firstSeq = size > 0 ? (s.seqs[oldest] as number) : lastSeq + 1;
      const slot = (i: number) => (oldest + i) % s.capacity;
      return {
        size,
        start: Math.max(0, Math.min(size, since + 1 - firstSeq)),
        at: (i) => entryAt(slot(i)),
        seqAt: (i) => s.seqs[slot(i)] as number,
        agentAt: (i) => {
          const id = s.agents[slot(i)] as number;
          return id < 0 ? undefined : (s.refs.valueOf(id) as string);
        },
      };
    },
    /** Empty, with this capacity. */
    reset(nextCapacity = s.capacity) {
      s = emptyRing(nextCapacity);
    },
  };
}

export interface RingWindow {
  size: number;
  start: number;
  at: (i: number) => JournalEntry;
  /** The seq of the i-th entry, without making it. */
  seqAt: (i: number) => number;
  /** The agent of the i-th entry, without making it. */
  agentAt: (i: number) => string | undefined;
}
