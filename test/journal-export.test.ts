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
});
