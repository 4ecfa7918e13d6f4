import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { syntheticEntry } from '../../test/support/synthetic-journal.ts';
import type { JournalEntry } from './journal-entry.ts';
import { CapturedExchange } from './packed-exchange.ts';
import { createRefTable, SWEEP_AT } from './record-bytes.ts';
import { createRing, type EntryWork } from './record-ring.ts';

/** Fields an entry may carry besides the synthetic ones: every kind a record writes. */
const extras = fc.record(
  {
    code: fc.constantFrom('rate_limited', 'access_denied', 'some_target_code'),
    retry_after: fc.constantFrom('1', '30', 'Wed, 21 Oct 2015 07:28:00 GMT'),
    retry_after_ms: fc.double({ noNaN: true }),
    written_ms: fc.double({ min: 0, max: 1e9, noNaN: true }),
    connection: fc.nat(),
    query: fc.string({ unit: 'grapheme', maxLength: 60 }),
    token: fc.string({ minLength: 1, maxLength: 30 }),
    quota: fc.array(
      fc.record({ rule: fc.string(), key: fc.string(), limit: fc.nat(), remaining: fc.integer() }),
      { maxLength: 3 },
    ),
    limit: fc.record({ rule: fc.string(), scope: fc.string(), key: fc.string() }),
    findings: fc.array(fc.record({ rule: fc.string(), detail: fc.string() }), { maxLength: 2 }),
    own_key_unknown: fc.constant(true as const),
    fault: fc.option(fc.string(), { nil: undefined }),
    // A field the entry's vocabulary does not list (written by name), a quota-shaped list included (only
    // the quota field is written as one: any other field holding one is JSON, read back the same).
    not_in_the_vocabulary: fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.record({ rule: fc.string(), key: fc.string(), limit: fc.nat(), remaining: fc.integer() }), {
        maxLength: 2,
      }),
    ),
  },
  { requiredKeys: [] },
);

const recorded = (i: number, more: object) => ({ ...syntheticEntry(i), ...more, seq: i + 1, time: '' });

describe('the journal as records', () => {
  test.prop([fc.array(extras, { minLength: 1, maxLength: 30 })])(
    'gives back each entry as recorded, its fields in the same order, whatever they hold',
    (more) => {
      const ring = createRing(50);
      const given = more.map((fields, i) => recorded(i, fields) as JournalEntry);
      for (const entry of given) ring.push({ ...entry });
      const back = [...ring.all()];
      expect(back.map((e) => JSON.stringify(e))).toEqual(given.map((e) => JSON.stringify(e)));
      // Keys holding undefined are kept as such (JSON leaves them out; the entry still has them).
      expect(back.map((e) => Object.keys(e))).toEqual(given.map((e) => Object.keys(e)));
    },
  );

  it('keeps what was recorded, whatever happens to the object given afterwards', () => {
    const ring = createRing(4);
    const entry = recorded(1, { quota: [{ rule: 'r', key: 'k', limit: 5, remaining: 4 }] }) as JournalEntry;
    ring.push(entry);
    entry.status = 500;
    const quota = entry.quota as { remaining: number }[];
    if (quota[0]) quota[0].remaining = 0;
    const [back] = [...ring.all()];
    expect(back?.status).toBe(200);
    expect(back?.quota).toEqual([{ rule: 'r', key: 'k', limit: 5, remaining: 4 }]);
  });

  it('lets go of its slabs and shared values with the entries it overwrites', () => {
    const ring = createRing(100);
    for (let i = 0; i < 20_000; i++)
      ring.push(
        recorded(i, { agent: `agent-${i}`, token: `fp-${i}`, query: 'x'.repeat(i % 500) }) as JournalEntry,
      );
    // A hundred entries of at most ~700 bytes: a few 64 KiB slabs; the field names and the agents' values of
    // the records held, and at most SWEEP_AT values of records let go, kept in case they come back.
    expect(ring.slabs).toBeLessThanOrEqual(3);
    expect(ring.refs).toBeLessThanOrEqual(100 * 2 + 40 + SWEEP_AT + 1);
    expect([...ring.all()].map((e) => e.agent)).toEqual(
      Array.from({ length: 100 }, (_, k) => `agent-${19_900 + k}`),
    );
  });

  it('keeps the id of a value that comes back after its last record went, and sweeps the rest in bulk', () => {
    const refs = createRefTable();
    const id = refs.idOf('tok_agent_1');
    for (let k = 0; k < 10_000; k++) {
      expect(refs.idOf('tok_agent_1')).toBe(id);
      refs.hold(id);
      refs.release([id]);
    }
    for (let k = 0; k <= SWEEP_AT * 2; k++) {
      const other = refs.idOf(`tok_${k}`);
      refs.hold(other);
      refs.release([other]);
    }
    // Swept once past SWEEP_AT unheld values: bounded, and what is held stays.
    const held = refs.idOf('tok_held');
    refs.hold(held);
    expect(refs.size).toBeLessThanOrEqual(SWEEP_AT + 2);
    expect(refs.valueOf(held)).toBe('tok_held');
  });

  it('applies readings once, at the first read, however often the entry is read after', () => {
    const ring = createRing(8);
    let applied = 0;
    const readings: EntryWork = {
      apply(entry) {
        applied += 1;
        (entry as Partial<JournalEntry>).request_key = 'key_read';
      },
      recordTo(writer) {
        writer.ref(readBack);
      },
    };
    const readBack = () => readings;
    ring.push(recorded(0, {}) as JournalEntry, { readings });
    expect(applied).toBe(0);
    for (let k = 0; k < 3; k++) expect(ring.window(0, 1).at(0).request_key).toBe('key_read');
    expect([...ring.all()][0]?.request_key).toBe('key_read');
    expect(applied).toBe(1);
  });

  it('lets go of full slabs in a ring smaller than a slab holds (capacity 1 and 2)', () => {
    for (const capacity of [1, 2]) {
      const ring = createRing(capacity);
      for (let i = 0; i < 2_000; i++) ring.push(recorded(i, { query: 'x'.repeat(2_500) }) as JournalEntry);
      expect(ring.slabs, `capacity ${capacity}`).toBe(1);
    }
  });

  it("does an entry's work once, at its first read, and keeps what it gave while slabs are used again", () => {
    const ring = createRing(40);
    const exchange = (i: number) =>
      new CapturedExchange(
        {
          requestHeaders: ['x-n', String(i)],
          requestBody: Buffer.from(`{"query":"question ${i}"}`),
          requestBodyBytes: 22,
          responseHeaders: [],
          responseBody: Buffer.from(`answer ${i} `.repeat(100)),
        },
        2048,
        (text) => ({ redacted: text }),
        {},
      );
    for (let i = 0; i < 30; i++) ring.push(recorded(i, {}) as JournalEntry, { exchange: exchange(i) });
    // Read (its work done, the entry written back without it), and held by this reader.
    const window = ring.window(0, 30);
    const held = window.at(3);
    expect(window.at(3)).toEqual(held);
    // Enough newer entries to let the first slabs go and use their bytes again for newer records.
    for (let i = 30; i < 400; i++) ring.push(recorded(i, {}) as JournalEntry, { exchange: exchange(i) });
    expect(held.exchange?.request_headers).toEqual([['x-n', '3']]);
    expect(held.exchange?.request_body).toBe('{"query":"question 3"}');
    expect(held.exchange?.response_body).toBe('answer 3 '.repeat(100));
    // The newest, read after all that: its own bytes.
    const newest = ring.window(0, 400).at(39);
    expect(newest.exchange?.request_body).toBe('{"query":"question 399"}');
  });
});
