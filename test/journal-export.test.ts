import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';
import { MAX_JOURNAL_PAGE } from '../mock-server/journal/journal.ts';
import { runCli } from './support/cli.ts';
import { syntheticEntry } from './support/synthetic-journal.ts';

const KEY = 'qa-journal-export-key';
const COUNT = 2 * MAX_JOURNAL_PAGE + 321;

describe('the journal of any size: pages over HTTP, NDJSON export from the CLI', () => {
  let gateway: Gateway;
  let server: RunningServer;
  beforeAll(async () => {
    gateway = createGateway({ adminKey: KEY, config: { journal: { capacity: COUNT + 100 } } });
    server = await serve(gateway, { port: 0, log: () => {} });
    // A synthetic journal: what many requests would have left.
    for (let i = 0; i < COUNT; i++)
      gateway.journal.record(syntheticEntry(i, i % 3 === 0 ? 'agent-early' : 'agent-verified'));
  });
  afterAll(() => server?.close());

  it('GET /__admin/journal answers one capped page, saying where to go on', async () => {
    const answer = await fetch(`${server.url}/__admin/journal`, { headers: { 'x-admin-key': KEY } });
    const page = (await answer.json()) as { entries: { seq: number }[]; more: boolean; next_since: number };
    expect(page.entries).toHaveLength(MAX_JOURNAL_PAGE);
    expect(page.more).toBe(true);
    expect(page.next_since).toBe(page.entries.at(-1)?.seq);
  });

  it('admin journal export: every entry once, oldest first, one JSON a line; --agent and --since filter', async () => {
    const all = await runCli(['admin', 'journal', 'export', '--base-url', server.url], {
      env: { AGENT_GATEWAY_ADMIN_KEY: KEY },
    });
    expect(all.code, all.stderr).toBe(0);
    const seqs = all.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { seq: number }).seq);
    expect(seqs).toEqual(gateway.journal.list().map((e) => e.seq));
    const some = await runCli(
      ['admin', 'journal', 'export', '--agent', 'agent-early', '--since', '100', '--base-url', server.url],
      { env: { AGENT_GATEWAY_ADMIN_KEY: KEY } },
    );
    expect(some.code, some.stderr).toBe(0);
    const lines = some.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { seq: number; agent: string });
    expect(lines.map((e) => e.seq)).toEqual(
      gateway.journal.list({ agent: 'agent-early', since: 100 }).map((e) => e.seq),
    );
  }, 180_000);

  const exportOver = async (fetcher: (url: string, init: RequestInit) => Promise<Response>, query = '') => {
    const answer = await fetcher(`${server.url}/__admin/journal/export${query}`, {
      headers: { 'x-admin-key': KEY },
    });
    return { answer, text: await answer.text() };
  };
  const entriesOf = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { seq: number });

  it('GET /__admin/journal/export streams every entry once, oldest first, as the journal lists them', async () => {
    const until = gateway.journal.list().at(-1)?.seq;
    for (const [name, fetcher] of [
      ['node:http', (url: string, init: RequestInit) => fetch(url, init)],
      ['in process', (url: string, init: RequestInit) => gateway.fetch(new Request(url, init))],
    ] as const) {
      const { answer, text } = await exportOver(fetcher);
      expect(answer.status, name).toBe(200);
      expect(answer.headers.get('content-type'), name).toMatch(/^application\/x-ndjson/);
      expect(answer.headers.get('x-journal-until'), name).toBe(String(until));
      expect(entriesOf(text), name).toEqual(gateway.journal.list());
      const some = await exportOver(fetcher, '?agent=agent-early&since=100');
      expect(entriesOf(some.text), name).toEqual(gateway.journal.list({ agent: 'agent-early', since: 100 }));
    }
    const head = await fetch(`${server.url}/__admin/journal/export`, {
      method: 'HEAD',
      headers: { 'x-admin-key': KEY },
    });
    expect([head.status, await head.text(), head.headers.get('x-journal-until')]).toEqual([
      200,
      '',
      String(until),
    ]);
    const bad = await exportOver(fetch, '?since=-1');
    expect(bad.answer.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ code: 'invalid_request', field: 'since' });
  });

  it('the report over HTTP (the journal read in slices) equals the report of the journal read at once', async () => {
    for (const agent of ['agent-early', 'agent-verified']) {
      const answer = await fetch(`${server.url}/__admin/report?agent=${agent}`, {
        headers: { 'x-admin-key': KEY },
      });
      expect(answer.status).toBe(200);
      const report = (await answer.json()) as { requests: number };
      expect(report.requests).toBe(gateway.journal.list({ agent }).length);
      expect(report).toEqual(JSON.parse(JSON.stringify(gateway.clientReport(agent))));
    }
  }, 60_000);
});
