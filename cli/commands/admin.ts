import type { Command } from 'commander';
import { adminCall } from '../admin-client.ts';
import { registerAgents } from './admin-agents.ts';
import { registerClock } from './admin-clock.ts';
import { type ConnectionOptions, connected, print, targetOf } from './admin-connection.ts';
import { registerExchangeCommands } from './admin-exchanges.ts';
import { registerFaults } from './admin-faults.ts';
import { registerJournal } from './admin-journal.ts';
import { registerScenarios } from './admin-scenarios.ts';
import { type ClockState, clockLine, table } from './admin-text.ts';
import { registerReportCommand } from './report.ts';

export { parseDuration } from './admin-text.ts';

/**
 * `agent-gateway admin ...`: the admin API of a running reference gateway from the command line, so QA
 * never needs curl: scenarios, the clock, faults, agents, the journal, reset, limits, tools and the client
 * report. `--json` prints the admin API's answer; exit 0 done, 1 (report) violations, 2 could not.
 */
export function registerAdminCommand(program: Command) {
  const admin = program
    .command('admin')
    .description(
      'drive a running gateway through its admin API: scenarios, clock, faults, agents, journal, reset',
    )
    .addHelpText(
      'after',
      '\nEvery subcommand takes --base-url (default http://127.0.0.1:8787), --admin-key (default\n$AGENT_GATEWAY_ADMIN_KEY) and --json. Exit codes: 0 done, 1 the report found violations, 2 could not.\n\nExamples:\n  export AGENT_GATEWAY_ADMIN_KEY=qa-secret-key\n  npx --no-install agent-gateway admin scenarios load burst-429\n  npx --no-install agent-gateway admin clock advance 10s\n  npx --no-install agent-gateway admin faults arm --kind status --status 503 --operation web.search --count 2\n  npx --no-install agent-gateway admin journal --agent agent-verified --limit 20\n  npx --no-install agent-gateway admin report agent-verified\n',
    );
  registerScenarios(admin);
  registerClock(admin);
  registerFaults(admin);
  registerAgents(admin);
  registerJournal(admin);
  registerExchangeCommands(admin);

  connected(
    admin
      .command('reset')
      .description('back to how serve started: its config and --scenario; faults and journal cleared'),
  ).action(async (options: ConnectionOptions) => {
    const answer = await adminCall<{ clock: ClockState }>(targetOf(options), 'POST', '/__admin/reset');
    print(options, answer, (a) => `Reset. Clock: ${clockLine(a.clock)}`);
  });
  connected(admin.command('limits').description('the rate limits in force')).action(
    async (options: ConnectionOptions) => {
      const limits = await adminCall<{
        retry_after: string;
        rules: {
          name: string;
          scope: string;
          algorithm: string;
          limit: number;
          window_seconds: number;
          operations?: string[];
        }[];
        concurrency: { per_agent?: number | null };
      }>(targetOf(options), 'GET', '/__admin/limits');
      print(options, limits, (l) =>
        [
          l.rules.length === 0
            ? 'No rate-limit rule.'
            : table([
                ['RULE', 'SCOPE', 'ALGORITHM', 'LIMIT', 'OPERATIONS'],
                ...l.rules.map((r) => [
                  r.name,
                  r.scope,
                  r.algorithm,
                  `${r.limit} per ${r.window_seconds} s`,
                  r.operations?.join(',') ?? 'whoami and every tool',
                ]),
              ]),
          `Retry-After as ${l.retry_after}; concurrency per agent: ${l.concurrency.per_agent ?? 'no limit'}`,
        ].join('\n'),
      );
    },
  );
  connected(admin.command('tools').description('the tools and who may call them')).action(
    async (options: ConnectionOptions) => {
      const answer = await adminCall<{
        tools: Record<string, { tiers: string[]; enabled: boolean; latency_ms: number }>;
      }>(targetOf(options), 'GET', '/__admin/tools');
      print(options, answer, (a) =>
        table([
          ['TOOL', 'ENABLED', 'TIERS', 'LATENCY'],
          ...Object.entries(a.tools).map(([name, t]) => [
            name,
            t.enabled ? 'yes' : 'no',
            t.tiers.join(',') || '-',
            `${t.latency_ms} ms`,
          ]),
        ]),
      );
    },
  );
  // One report command: `agent-gateway report`, registered here too (report.ts), same flags, same defaults.
  registerReportCommand(admin);
}
