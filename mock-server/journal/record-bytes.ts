/*
 * The bytes one journal record is written as and read back from (issue 35, point 2): numbers as 8-byte
 * doubles, a string as a 4-byte length and its UTF-8 bytes, bytes likewise, a tag byte, and a reference
 * (`ref`) as a 4-byte id into the journal's table of values many records share (an agent's id and token,
 * a tool, the secrets known at a call, a field name), which the table keeps while a record using it is held.
 * A record holds no object of the collector's heap: what a request leaves until it is read is bytes.
 */

/**
 * Values records share, by id, each kept while a record that uses it is held (`hold` / `release`). A value
 * no record holds is forgotten in a sweep, once there are more such values than `SWEEP_AT` or than half the
 * values held: a value that comes back soon (an agent's token, seen again in its next request after the
 * ring let its last record go) keeps its id, and the table is not changed on every request (with 10,000
 * agents, forgetting each value at once made its Map delete and add a key per request: measured, 5 µs a
 * request in `idOf` and a collector busy with the Map's tables).
 */
export interface RefTable {
  /** The id of `value` (given now if it has none): a record written with it must then be held (`hold`). */
  idOf(value: unknown): number;
  valueOf(id: number): unknown;
  /** One more holder of an id (a slab of records that use it). */
  hold(id: number): void;
  /** One holder fewer of each id; the values no one holds are forgotten in the next sweep. */
  release(ids: readonly number[]): void;
  /** How many values the table has (held or waiting for a sweep; for tests: bounded). */
  readonly size: number;
}

/**
 * Values no record holds, kept for their return, before a sweep forgets them (at least): as many as the
 * identity provider remembers tokens (`createTokenMemo`), so the values of a fleet's agents (an id, a token
 * and its fingerprint each) stay while each agent sends again within the fleet's round.
 */
export const SWEEP_AT = 65_536;

export function createRefTable(): RefTable {
  const ids = new Map<unknown, number>();
  const values: unknown[] = [];
  const holders: number[] = [];
  const free: number[] = [];
  let unheld = 0;
  const sweep = () => {
    for (const [value, id] of ids) {
      if ((holders[id] as number) > 0) continue;
      ids.delete(value);
      values[id] = undefined;
      free.push(id);
    }
    unheld = 0;
  };
  return {
    idOf(value) {
      const known = ids.get(value);
      if (known !== undefined) return known;
      const id = free.pop() ?? values.length;
      ids.set(value, id);
      values[id] = value;
      holders[id] = 0;
      unheld += 1;
      return id;
    },
    valueOf: (id) => values[id],
    hold(id) {
      const before = holders[id] as number;
      holders[id] = before + 1;
      if (before === 0) unheld -= 1;
    },
    release(held) {
      for (const id of held) {
        const left = (holders[id] as number) - 1;
        holders[id] = left;
        if (left === 0) unheld += 1;
      }
      if (unheld > SWEEP_AT && unheld > ids.size / 2) sweep();
    },
    get size() {
      return ids.size;
    },
  };
}

/**
 * Writes one record into a scratch buffer that grows as needed (the record's size is known once written):
 * `begin`, the writes, then `take` hands the bytes and the ids it referred to over to whoever keeps them.
 */
export class RecordWriter {
  private buffer = Buffer.allocUnsafeSlow(16 * 1024);
  // Numbers and lengths through a DataView (inlined by V8), not Buffer's checked write methods.
  private view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
  private at = 0;
  /**
   * The ids this record refers to, repeats included (a few dozen: an agent, a token, a tool, the known
   * secrets, field names). An array emptied in place: a Set's `clear` makes a new table each record, which
   * V8 makes in the old generation (measured: 2.1 KB a request surviving young collections).
   */
  readonly used: number[] = [];

  constructor(private readonly refs: RefTable) {}

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.length);
  }

  number(value: number): void {
    this.room(8);
    this.view.setFloat64(this.at, value, true);
    this.at += 8;
  }

  tag(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  string(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: with that much room, `write` never cuts the text.
    this.room(4 + 3 * text.length);
    const start = this.at + 4;
    // Buffer's own UTF-8 writer, whatever the text: a loop over `charCodeAt` for short ASCII texts cost more
    // (measured: 2.5 µs a request of generic property loads, the texts of a record being strings of many
    // kinds: literals, parsed header values, concatenations, slices).
    const length = this.buffer.write(text, start);
    this.view.setUint32(this.at, length, true);
    this.at = start + length;
  }

  bytes(bytes: Uint8Array): void {
    this.room(4 + bytes.length);
    this.view.setUint32(this.at, bytes.length, true);
    this.buffer.set(bytes, this.at + 4);
    this.at += 4 + bytes.length;
  }

  /** A text or bytes, as bytes (UTF-8 for a text): read back with `RecordReader.bytes`. */
  body(body: Uint8Array | string): void {
    if (typeof body === 'string') this.string(body);
    else this.bytes(body);
  }

  /**
   * Texts (a header list): their count, each one's length in UTF-16 units, then all of them as one text,
   * written at once (a write per text cost more: measured, 0.5 µs a request).
   */
  list(values: readonly string[]): void {
    this.room(4 + 4 * values.length);
    this.view.setUint32(this.at, values.length, true);
    this.at += 4;
    for (let k = 0; k < values.length; k++) {
      this.view.setUint32(this.at, (values[k] as string).length, true);
      this.at += 4;
    }
    this.string(values.join(''));
  }

  /** A value shared by many records (compared by identity, or by value for a string), by its id. */
  ref(value: unknown): void {
    const id = this.refs.idOf(value);
    this.used.push(id);
    this.room(4);
    this.view.setUint32(this.at, id, true);
    this.at += 4;
  }

  /** The record written since `begin` (a view of the scratch buffer: copy it before the next `begin`). */
  take(): { bytes: Buffer; used: readonly number[] } {
    return { bytes: this.buffer.subarray(0, this.at), used: this.used };
  }

  /** Starts a record afresh (the ids of the last one forgotten). */
  begin(): void {
    this.at = 0;
    this.used.length = 0;
  }
}

/**
 * Reads a record back, in the order it was written. `bytes` are copies: the ring uses a slab's bytes again
 * once its records are gone, while what was read from them (an entry's deferred work) may still be held.
 */
export class RecordReader {
  private at = 0;

  constructor(
    private readonly record: Buffer,
    private readonly refs: RefTable,
  ) {}

  number(): number {
    const value = this.record.readDoubleLE(this.at);
    this.at += 8;
    return value;
  }

  tag(): number {
    return this.record[this.at++] as number;
  }

  bytes(): Buffer {
    const length = this.record.readUInt32LE(this.at);
    this.at += 4 + length;
    return Buffer.from(this.record.subarray(this.at - length, this.at));
  }

  string(): string {
    const length = this.record.readUInt32LE(this.at);
    this.at += 4 + length;
    return this.record.toString('utf8', this.at - length, this.at);
  }

  /**
   * The texts `RecordWriter.list` wrote, cut from their one text by their lengths (a lone surrogate reads
   * back as U+FFFD, one unit as it was, so the lengths still hold).
   */
  list(): string[] {
    const count = this.record.readUInt32LE(this.at);
    this.at += 4;
    const lengths: number[] = [];
    for (let k = 0; k < count; k++) {
      lengths.push(this.record.readUInt32LE(this.at));
      this.at += 4;
    }
    const whole = this.string();
    const values: string[] = [];
    let from = 0;
    for (const length of lengths) {
      values.push(whole.slice(from, from + length));
      from += length;
    }
    return values;
  }

  ref<T = unknown>(): T {
    const id = this.record.readUInt32LE(this.at);
    this.at += 4;
    return this.refs.valueOf(id) as T;
  }
}
