import { writeFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import type { RuleFindings } from '../../mock-server/journal/answer-findings.ts';
import { adminCall } from '../admin-client.ts';
import { CliError, EXIT, intOption } from '../cli-options.ts';
import { type ConnectionOptions, connected, plain, print, targetOf } from './admin-connection.ts';

interface FindingsAnswer {
  judged: number;
  dropped: number;
  rules: RuleFindings[];
}

/** The findings answer as text: per rule, its exchanges (most recent last). */
function describeFindings(answer: FindingsAnswer): string {
  const dropped = answer.dropped > 0 ? ` (${answer.dropped} older exchanges dropped from the journal)` : '';
  if (answer.rules.length === 0)
    return `No finding in ${answer.judged} judged answer(s)${dropped}. Not a verdict: only what this traffic met was judged; \`agent-gateway check\` provokes every rule.`;
  const blocks = answer.rules.map((rule) => {
    const lines = rule.exchanges.map(
      (x) =>
        `    #${x.seq} ${x.method} ${x.path} -> ${x.status}${x.code ? ` ${x.code}` : ''}${x.agent ? ` (${x.agent})` : ''}: ${x.detail}  [request ${x.request_id}]`,
    );
    const more =
      rule.count > rule.exchanges.length ? `\n    ... and ${rule.count - rule.exchanges.length} earlier` : '';
    return `${rule.level} ${rule.id} (${rule.specRef}): ${rule.title}\n  ${rule.count} answer(s):\n${lines.join('\n')}${more}`;
  });
  return plain(
    `${blocks.join('\n\n')}\n\n${answer.rules.length} rule(s) broken in ${answer.judged} judged answer(s)${dropped}.`,
  );
}

/** `admin findings` and `admin export`: what the journal holds of each exchange, for people and tools. */
export function registerExchangeCommands(admin: Command) {
  connected(
    admin
      .command('findings')
      .description(
        "spec rules the gateway's answers broke, per rule with the exchanges (proxy mode); exit 1 if any",
      )
      .option('--agent <id>', "only this agent's exchanges")
      .option('--per-rule <n>', 'exchanges shown per rule (the most recent)', intOption(1, 1000)),
  ).action(async (options: ConnectionOptions & { agent?: string; perRule?: number }) => {
    const query = new URLSearchParams();
    if (options.agent !== undefined) query.set('agent', options.agent);
    if (options.perRule !== undefined) query.set('per_rule', String(options.perRule));
    const answer = await adminCall<FindingsAnswer>(
      targetOf(options),
      'GET',
      `/__admin/findings${query.size > 0 ? `?${query}` : ''}`,
    );
    print(options, answer, describeFindings);
    process.exitCode = answer.rules.length > 0 ? EXIT.failed : EXIT.ok;
  });

  connected(
    admin
      .command('export')
      .description('the journal as a file: HAR 1.2 (devtools, proxies and HAR viewers open it)')
      .addOption(new Option('--format <format>', 'file format').choices(['har']).default('har'))
      .option('-o, --out <file>', 'write to this file (default: standard output)')
      .option('--agent <id>', "only this agent's exchanges")
      .option('--since <seq>', 'only after this sequence number', intOption(0, Number.MAX_SAFE_INTEGER))
      .option('--limit <n>', 'only the most recent n', intOption(1, 1_000_000)),
  ).action(
    async (
      options: ConnectionOptions & {
        format: 'har';
        out?: string;
        agent?: string;
        since?: number;
        limit?: number;
      },
    ) => {
      const query = new URLSearchParams({ format: options.format });
      if (options.agent !== undefined) query.set('agent', options.agent);
      if (options.since !== undefined) query.set('since', String(options.since));
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      const har = await adminCall<{ log: { entries: unknown[] } }>(
        targetOf(options),
        'GET',
        `/__admin/export?${query}`,
      );
      const text = `${JSON.stringify(har, null, 2)}\n`;
      if (!options.out) {
        process.stdout.write(text);
        return;
      }
      try {
        writeFileSync(options.out, text);
      } catch (error) {
        throw new CliError(`Cannot write ${options.out}: ${(error as Error).message}`);
      }
      process.stderr.write(`Wrote ${har.log.entries.length} exchange(s) to ${options.out} (HAR 1.2).\n`);
    },
  );
}
