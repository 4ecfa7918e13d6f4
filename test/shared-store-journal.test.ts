import { afterAll, beforeAll, expect, it } from 'vitest';
import { harOf, harTextSlices } from '../mock-server/journal/har.ts';
import { createJournal, type JournalEntry, type JournalFilter } from '../mock-server/journal/journal.ts';
import { connectRedis, type RedisConnection } from '../mock-server/store/redis-connection.ts';
import { createRedisJournal, JOURNAL_SLICE } from '../mock-server/store/redis-journal.ts';
import { describeWithRedis, type RedisProcess, startRedis } from './support/redis.ts';
import { syntheticEntry } from './support/synthetic-journal.ts';

let redis: RedisProcess;
let connection: RedisConnection;
const AGENTS = ['a', 'b', 'c', undefined, 'b'];
const COUNT = 2 * JOURNAL_SLICE + 600;

describeWithRedis('the shared journal pages as the in-memory one does (slices of the stream)', () => {
  const memory = createJournal(COUNT);
  let shared: ReturnType<typeof createRedisJournal>;
  beforeAll(async () => {
    redis = await startRedis();
    connection = await connectRedis({ url: redis.url, keyPrefix: 'j', timeoutMs: 10_000, log: () => {} });
    shared = createRedisJournal(connection, COUNT, 1);
    for (let i = 0; i < COUNT; i++) {
      const entry = () => syntheticEntry(i, AGENTS[i % AGENTS.length]);
      memory.record(entry());
      shared.record(entry());
    }
  }, 30_000);
  afterAll(async () => {
    await connection?.close();
    await redis?.stop();
    redis?.cleanup();
  });

  const summary = (page: {
    entries: { seq: number; request_id: string }[];
    more: boolean;
    next_since: number;
  }) => ({
    ids: page.entries.map((e) => `${e.seq}:${e.request_id}`),
    more: page.more,
    next_since: page.next_since,
  });

  it('every filter and page size: the same entries, more and next_since', async () => {
    const filters: JournalFilter[] = [
      {},
      { agent: 'b' },
      { agent: 'c', since: 1500 },
      { agent: 'nobody' },
      { since: COUNT - 3 },
      { since: COUNT + 10 },
      { limit: 7 },
      { limit: 1500, agent: 'a' },
      { limit: 20, since: COUNT - 5 },
    ];
    for (const filter of filters)
      for (const max of [1, 50, JOURNAL_SLICE + 200, 5000]) {
        const expected = summary(memory.page(filter, max));
        expect(summary(await shared.page(filter, max)), JSON.stringify({ filter, max })).toEqual(expected);
      }
  }, 60_000);

  it('paging through with since=next_since reads everything once; readAll gives one agent whole', async () => {
    let since: number | undefined;
    const seqs: number[] = [];
    for (;;) {
      const page = await shared.page({ since }, 700);
      seqs.push(...page.entries.map((e) => e.seq));
      if (!page.more) break;
      since = page.next_since;
    }
    expect(seqs).toEqual(memory.list().map((e) => e.seq));
    const all = await shared.readAll({ agent: 'b' });
    expect(all.entries.map((e) => e.seq)).toEqual(memory.list({ agent: 'b' }).map((e) => e.seq));
  }, 60_000);

  it('the NDJSON export streams the entries up to the seq at its start, in XRANGE slices, as memory does', async () => {
    const lines = async (slices: Iterable<string> | AsyncIterable<string>) => {
      const texts: string[] = [];
      for await (const text of slices) texts.push(text);
      return {
        texts,
        entries: texts
          .join('')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      };
    };
    const ids = (entries: { seq: number; request_id: string; time: string }[]) =>
      entries.map((e) => `${e.seq}:${e.request_id}:${e.time}`);
    for (const filter of [
      {},
      { agent: 'b' },
      { since: 1500 },
      { agent: 'c', since: 17 },
      { agent: 'nobody' },
    ]) {
      const exported = await shared.exportSlices(filter, 300);
      expect(exported.until).toBe(COUNT);
      const { texts, entries } = await lines(exported.slices);
      expect(ids(entries), JSON.stringify(filter)).toEqual(ids(memory.list(filter)));
      for (const text of texts) expect(text.split('\n').filter(Boolean).length).toBeLessThanOrEqual(300);
    }
    // Entries recorded while it runs are not in it; nothing is read twice or skipped.
    const exported = await shared.exportSlices({}, 250);
    const seqs: number[] = [];
    for await (const text of exported.slices) {
      for (const line of text.split('\n').filter(Boolean))
        seqs.push((JSON.parse(line) as { seq: number }).seq);
      for (let i = 0; i < 5; i++)
        shared.record({
          request_id: `late${i}`,
          at: 1_800_000_000_000,
          duration_ms: 1,
          real_ms: 0,
          method: 'GET',
          path: '/v1/whoami',
          operation: 'whoami',
          status: 200,
        });
    }
    expect(seqs).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
  }, 60_000);

  it('the HAR export from the stream is the HAR of the same entries built at once', async () => {
    const origin = 'http://gw.test';
    // What the stream holds now (earlier tests appended to it), filtered as `list` filters.
    let all: JournalEntry[] = [];
    for await (const entries of (await shared.entrySlices({}, 1000)).slices) all = all.concat(entries);
    const listed = (filter: { agent?: string; since?: number; limit?: number }) => {
      const out = all.filter(
        (e) => (filter.agent === undefined || e.agent === filter.agent) && e.seq > (filter.since ?? 0),
      );
      return filter.limit === undefined ? out : out.slice(-filter.limit);
    };
    for (const filter of [
      {},
      { agent: 'c', since: 17 },
      { limit: 7 },
      { limit: 1500, agent: 'a' },
      { limit: 99_999 },
    ]) {
      const { slices, dropped } = await shared.entrySlices(filter, 300);
      let streamed = '';
      for await (const text of harTextSlices(slices, origin, dropped)) streamed += text;
      expect(streamed, JSON.stringify(filter)).toBe(JSON.stringify(harOf(listed(filter), origin, dropped)));
      expect(JSON.parse(streamed).log.entries.length).toBe(listed(filter).length);
    }
    expect(listed({ limit: 7 }).map((e) => e.seq)).toEqual(all.slice(-7).map((e) => e.seq));
  }, 60_000);
});
