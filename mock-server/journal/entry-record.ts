import type { JournalEntry } from './journal-entry.ts';
import type { RecordReader, RecordWriter } from './record-bytes.ts';

/*
 * One journal entry as bytes (issue 35, point 2), with the work left on it until it is first read: its fields
 * in their order, each as its name (one byte for the entry's own fields, else by reference) and a kind byte
 * then its value; the texts many entries share (method, path, operation, code, agent, token, ...) by
 * reference, other texts inline, a rule's quota as numbers and references, any other object as JSON text. Then the deferred work, each piece writing its
 * own reader first (`Recordable`). Read back, it is an equal entry, fields in the same order.
 */

/** Work kept on a record until it is read: writes the function that reads it back (by `ref`), then its inputs. */
export interface Recordable {
  recordTo(writer: RecordWriter): void;
}

/** Reads back what a `Recordable` wrote after its reader. */
export type ReadBack<T> = (reader: RecordReader) => T;

/** What an entry's record holds besides its fields: its readings and its exchange, done at its first read. */
export interface RecordedWork<R, X> {
  readonly readings?: R;
  readonly exchange?: X;
}

// The fields whose texts repeat across entries: kept once, by reference.
const SHARED_TEXTS = new Set([
  'method',
  'path',
  'operation',
  'code',
  'agent',
  'token',
  'retry_after',
  'fault',
  'idempotency',
  'time',
]);

// The entry's fields (journal-entry.ts) as one byte each; any other name is written by reference after
// OTHER_FIELD (a field the proxy or a test adds). 0 ends the fields.
const FIELDS = [
  'seq',
  'time',
  'request_id',
  'at',
  'epoch',
  'duration_ms',
  'real_ms',
  'written_ms',
  'connection',
  'connection_opened_ms',
  'connection_seq',
  'answers_seen',
  'answer_order',
  'delivery_instance',
  'read_turn',
  'opened_turn',
  'written_turn',
  'method',
  'path',
  'operation',
  'status',
  'code',
  'agent',
  'token',
  'in_flight',
  'request_fingerprint',
  'request_key',
  'retry_after',
  'retry_after_ms',
  'limit',
  'quota',
  'fault',
  'replay',
  'idempotency',
  'query',
  'url',
  'secrets',
  'secrets_split',
  'secrets_in',
  'own_key_unknown',
  'exchange',
  'findings',
  'target_request_id',
  'stall_runs',
  'body_unread',
  'attributed_by',
] as const satisfies readonly (keyof JournalEntry)[];
const OTHER_FIELD = 255;

/**
 * How each of the entry's own fields is written, found with one lookup per field: its byte, whether its
 * text is shared (by reference), whether it may be a quota list. A field this does not know: `undefined`.
 */
interface FieldPlan {
  readonly id: number;
  readonly shared: boolean;
  readonly quota: boolean;
}
const FIELD_PLANS = new Map<string, FieldPlan>(
  FIELDS.map((name, k) => [name, { id: k + 1, shared: SHARED_TEXTS.has(name), quota: name === 'quota' }]),
);
const OTHER_PLAN: FieldPlan = { id: OTHER_FIELD, shared: false, quota: false };

enum Kind {
  Missing = 0,
  Number = 1,
  Text = 2,
  SharedText = 3,
  True = 4,
  False = 5,
  Json = 6,
  Quota = 7,
  Null = 8,
}

type Quota = NonNullable<JournalEntry['quota']>;

/** Whether `value` is a quota list as the admit stage writes it (each item exactly its four fields). */
function isQuota(value: unknown): value is Quota {
  if (!Array.isArray(value)) return false;
  for (const item of value) {
    if (typeof item !== 'object' || item === null) return false;
    let fields = 0;
    for (const _ in item) fields++;
    const { rule, key, limit, remaining } = item as Quota[number];
    if (fields !== 4 || typeof rule !== 'string' || typeof key !== 'string') return false;
    if (typeof limit !== 'number' || typeof remaining !== 'number') return false;
  }
  return true;
}

function writeValue(writer: RecordWriter, plan: FieldPlan, value: unknown): void {
  switch (typeof value) {
    case 'number':
      writer.tag(Kind.Number);
      writer.number(value);
      return;
    case 'string':
      if (plan.shared) {
        writer.tag(Kind.SharedText);
        writer.ref(value);
      } else {
        writer.tag(Kind.Text);
        writer.string(value);
      }
      return;
    case 'boolean':
      writer.tag(value ? Kind.True : Kind.False);
      return;
    case 'undefined':
      writer.tag(Kind.Missing);
      return;
  }
  if (value === null) writer.tag(Kind.Null);
  // Only the quota field is tried as a quota list: any other object (secrets, stall runs, findings) is JSON
  // without walking it first.
  else if (plan.quota && isQuota(value)) {
    writer.tag(Kind.Quota);
    writer.number(value.length);
    for (const { rule, key, limit, remaining } of value) {
      writer.ref(rule);
      writer.ref(key);
      writer.number(limit);
      writer.number(remaining);
    }
  } else {
    writer.tag(Kind.Json);
    writer.string(JSON.stringify(value));
  }
}

function readValue(reader: RecordReader, kind: number): unknown {
  switch (kind) {
    case Kind.Number:
      return reader.number();
    case Kind.Text:
      return reader.string();
    case Kind.SharedText:
      return reader.ref<string>();
    case Kind.True:
      return true;
    case Kind.False:
      return false;
    case Kind.Null:
      return null;
    case Kind.Quota: {
      const quota: Quota = [];
      for (let k = reader.number(); k > 0; k--)
        quota.push({
          rule: reader.ref<string>(),
          key: reader.ref<string>(),
          limit: reader.number(),
          remaining: reader.number(),
        });
      return quota;
    }
    case Kind.Json:
      return JSON.parse(reader.string());
    default:
      return undefined;
  }
}

/** Writes an entry and the work left on it (`undefined` pieces are absent). */
export function writeEntry(
  writer: RecordWriter,
  entry: JournalEntry,
  work: RecordedWork<Recordable, Recordable> | undefined,
): void {
  for (const name in entry) {
    let plan = FIELD_PLANS.get(name);
    if (plan !== undefined) writer.tag(plan.id);
    else {
      plan = OTHER_PLAN;
      writer.tag(OTHER_FIELD);
      writer.ref(name);
    }
    writeValue(writer, plan, entry[name as keyof JournalEntry]);
  }
  writer.tag(0);
  writeWork(writer, work?.readings);
  writeWork(writer, work?.exchange);
}

function writeWork(writer: RecordWriter, work: Recordable | undefined): void {
  writer.tag(work ? 1 : 0);
  work?.recordTo(writer);
}

function readWork<T>(reader: RecordReader): T | undefined {
  if (reader.tag() === 0) return undefined;
  return reader.ref<ReadBack<T>>()(reader);
}

/** An entry written by `writeEntry`, a new object, and the work left on it. */
export function readEntry<R, X>(reader: RecordReader): { entry: JournalEntry; work: RecordedWork<R, X> } {
  const entry: Record<string, unknown> = {};
  for (let id = reader.tag(); id !== 0; id = reader.tag()) {
    const name = id === OTHER_FIELD ? reader.ref<string>() : (FIELDS[id - 1] as string);
    entry[name] = readValue(reader, reader.tag());
  }
  const readings = readWork<R>(reader);
  const exchange = readWork<X>(reader);
  return { entry: entry as unknown as JournalEntry, work: { readings, exchange } };
}
