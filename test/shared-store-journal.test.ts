import { afterAll, beforeAll, expect, it } from 'vitest';
import { createJournal, type JournalFilter } from '../mock-server/journal/journal.ts';
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
});
