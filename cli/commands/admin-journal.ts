import type { Command } from 'commander';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import { adminCall } from '../admin-client.ts';
import { intOption } from '../cli-options.ts';
import { type ConnectionOptions, connected, print, targetOf } from './admin-connection.ts';
import { entryLine, table } from './admin-text.ts';

interface JournalOptions extends ConnectionOptions {
  agent?: string;
  since?: number;
  limit?: number;
}

/** A page of GET /__admin/journal: at most 1,000 entries; `more` says to page on from `next_since`. */
interface JournalPageAnswer {
  capacity: number;
  dropped: number;
  entries: JournalEntry[];
  more?: boolean;
  next_since?: number;
}

/** `admin journal list | export | clear`: the requests the gateway saw. */
export function registerJournal(admin: Command) {
  const journal = admin.command('journal').description('the requests the gateway saw');
  connected(
    journal
      .command('list', { isDefault: true })
      .description('recent requests, oldest first')
      .option('--agent <id>', "only this agent's requests")
      .option('--since <seq>', 'only after this sequence number', intOption(0, Number.MAX_SAFE_INTEGER))
      .option('--limit <n>', 'only the most recent n', intOption(1, 1_000_000)),
  ).action(async (options: JournalOptions) => {
    const query = new URLSearchParams();
    if (options.agent !== undefined) query.set('agent', options.agent);
    if (options.since !== undefined) query.set('since', String(options.since));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const answer = await adminCall<JournalPageAnswer>(
      targetOf(options),
      'GET',
      `/__admin/journal${query.size > 0 ? `?${query}` : ''}`,
    );
    print(options, answer, (a) => {
      const dropped = a.dropped > 0 ? ` (${a.dropped} older ones dropped; capacity ${a.capacity})` : '';
      const more = a.more
        ? `\nMore after seq ${a.next_since}: --since ${a.next_since}, or \`admin journal export\` for all.`
        : '';
      if (a.entries.length === 0) return `No request${dropped}.${more}`;
      return `${table(a.entries.map(entryLine))}\n\n${a.entries.length} request(s)${dropped}.${more}`;
    });
  });
  connected(
    journal
      .command('export')
      .description('every request, as NDJSON (one JSON entry a line) on stdout, read page by page')
      .option('--agent <id>', "only this agent's requests")
      .option('--since <seq>', 'only after this sequence number', intOption(0, Number.MAX_SAFE_INTEGER)),
  ).action(async (options: JournalOptions) => {
    const target = targetOf(options);
    let since = options.since;
    for (;;) {
      const query = new URLSearchParams();
      if (options.agent !== undefined) query.set('agent', options.agent);
      if (since !== undefined) query.set('since', String(since));
      const page = await adminCall<JournalPageAnswer>(
        target,
        'GET',
        `/__admin/journal${query.size > 0 ? `?${query}` : ''}`,
      );
      const lines = page.entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
      // Written as it arrives, waiting for stdout to drain: memory holds one page, whatever the journal.
      if (lines && !process.stdout.write(lines))
        await new Promise((resolve) => process.stdout.once('drain', resolve));
      if (!page.more) break;
      since = page.next_since;
    }
  });
  connected(journal.command('clear').description('empty the journal')).action(
    async (options: ConnectionOptions) => {
      print(
        options,
        await adminCall(targetOf(options), 'DELETE', '/__admin/journal'),
        () => 'Journal cleared.',
      );
    },
  );
}
