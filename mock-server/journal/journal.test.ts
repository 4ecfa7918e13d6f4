import { describe, expect, it, vi } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { syntheticEntry } from '../../test/support/synthetic-journal.ts';
import { createGateway } from '../gateway.ts';
import { createJournal } from './journal.ts';
import type { RecordReader } from './record-bytes.ts';
import type { EntryWork } from './record-ring.ts';

const entry = (i: number, agent?: string) => ({ ...syntheticEntry(i), agent });

describe('journal', () => {
  test.prop([fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 200 })])(
    'keeps only the last `capacity` entries, oldest first, with increasing seq',
    (capacity, count) => {
      const journal = createJournal(capacity);
      for (let i = 0; i < count; i++) journal.record(entry(i));
      const list = journal.list();
      expect(list).toHaveLength(Math.min(capacity, count));
      expect(journal.dropped).toBe(Math.max(0, count - capacity));
      expect(list.map((e) => e.request_id)).toEqual(
        Array.from(
          { length: Math.min(capacity, count) },
          (_, k) => `r${count - Math.min(capacity, count) + k}`,
        ),
      );
      for (let k = 1; k < list.length; k++) expect((list[k]?.seq ?? 0) - (list[k - 1]?.seq ?? 0)).toBe(1);
    },
  );

  it('filters by agent, pages with since, keeps the newest with limit, and adds ISO time', () => {
    const journal = createJournal(10);
    for (let i = 0; i < 6; i++) journal.record(entry(i, i % 2 ? 'a' : 'b'));
    expect(journal.list({ agent: 'a' }).map((e) => e.request_id)).toEqual(['r1', 'r3', 'r5']);
    expect(journal.list({ since: 4 }).map((e) => e.seq)).toEqual([5, 6]);
    expect(journal.list({ limit: 2 }).map((e) => e.seq)).toEqual([5, 6]);
    expect(journal.list()[0]?.time).toBe('2023-11-14T22:13:20.000Z'); // at 1_700_000_000_000 ms
  });

  it('clear empties it; seq keeps counting so `since` stays valid', () => {
    const journal = createJournal(3);
    journal.record(entry(1));
    journal.clear();
    expect(journal.list()).toEqual([]);
    journal.record(entry(2));
    expect(journal.list()[0]?.seq).toBe(2);
  });

  it('never holds a token or API key the caller put in an unknown path or its own request id', async () => {
    const gateway = createGateway();
    const token = gateway.mintToken('agent-verified');
    const apiKey = 'ak_verified_2b8d4f6a1c9e';
    await gateway.fetch(new Request(`http://gw.test/v1/nope/${token}/${apiKey}`));
    await gateway.fetch(
      new Request('http://gw.test/v1/whoami', {
        headers: { 'x-agent-identity': token, 'x-request-id': apiKey },
      }),
    );
    await gateway.fetch(
      new Request('http://gw.test/v1/whoami', {
        headers: { 'x-agent-identity': token, 'x-request-id': 'trace-42' },
      }),
    );
    const [unknown, keyAsId, plainId] = gateway.journal.list();
    expect(unknown?.path).toBe('/v1/nope/[REDACTED:identity_token]/[REDACTED:api_key]');
    // A secret is not taken as the request's id at all: the request got a fresh one.
    expect(keyAsId?.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(plainId?.request_id).toBe('trace-42');
    const journal = JSON.stringify(gateway.journal.list());
    expect(journal).not.toContain(apiKey);
    expect(journal).not.toContain(token.split('.')[2]);
  });

  it('counts the requests on each connection, of every agent, through a clear', () => {
    const journal = createJournal(10);
    const on = (i: number, connection?: number, agent = 'a') => ({
      ...entry(i, agent),
      ...(connection === undefined ? {} : { connection, connection_opened_ms: 0 }),
    });
    journal.record(on(1, 7));
    journal.record(on(2, 8, 'b'));
    journal.record(on(3, 7, 'b'));
    journal.record(on(4));
    journal.clear();
    journal.record(on(5, 7));
    journal.record(on(6, 9));
    expect(journal.list().map((e) => [e.request_id, e.connection_seq])).toEqual([
      ['r5', 3],
      ['r6', 1],
    ]);
  });
  it('settleRecorded: does the deferred work of every entry recorded before it, once each, not of later ones', async () => {
    const journal = createJournal(50);
    const applied: number[] = [];
    // Readings that note their entry's number when applied, kept as that number in the record.
    const readings = (i: number): EntryWork => ({
      apply: () => applied.push(i),
      recordTo(writer) {
        writer.ref(readBack);
        writer.number(i);
      },
    });
    const readBack = (reader: RecordReader) => readings(reader.number());
    const recordDeferred = (i: number) => journal.record(entry(i), { readings: readings(i) });
    for (let i = 0; i < 60; i++) recordDeferred(i);
    const pass = journal.settleRecorded();
    recordDeferred(60);
    await pass;
    // The pass starts after the last one was recorded: the eleven the ring overwrote by then are gone with
    // their work; the last one, recorded after the call, waits for a reader.
    expect(applied).toEqual(Array.from({ length: 49 }, (_, k) => k + 11));
    journal.list();
    await journal.settleRecorded();
    expect(applied).toEqual(Array.from({ length: 50 }, (_, k) => k + 11));
  });

  it('reads an entry with the secrets known at its call, and settles the unread ones when they change', async () => {
    const gateway = createGateway();
    const settle = vi.spyOn(gateway.runtime.journal, 'settleRecorded');
    const token = gateway.mintToken('agent-verified');
    const later = 'ak_registered_later_0123456789';
    const call = () =>
      gateway.fetch(
        new Request('http://gw.test/v1/whoami', { headers: { 'x-agent-identity': token, 'x-note': later } }),
      );
    await call();
    const verified = gateway.registry.get('agent-verified');
    if (!verified) throw new Error('no agent-verified');
    gateway.registry.add({ ...verified, id: 'agent-later', name: 'later', apiKey: later });
    await call();
    // The second call's scan saw the new key: the first entry, unread, was handed to a background pass.
    expect(settle).toHaveBeenCalledTimes(1);
    await settle.mock.results[0]?.value;
    // The key is gone again before the second entry is read: it is still found there.
    gateway.registry.reset();
    await call();
    const [before, known, gone] = gateway.journal.list();
    expect(before?.secrets_in).toBeUndefined();
    expect(known?.secrets).toEqual(['api_key']);
    expect(known?.secrets_in).toEqual(['header x-note']);
    expect(gone?.secrets_in).toBeUndefined();
  });
});
