import type { Command } from 'commander';
import type { ClientReport } from '../../mock-server/client-report/report.ts';
import { baseUrlOption, CliError, EXIT, intOption } from '../cli-options.ts';

interface ReportOptions {
  baseUrl: string;
  adminKey?: string;
  agent: string;
  json?: boolean;
  retryCap?: number;
  graceMs?: number;
  maxConcurrencyAfter429?: number;
  quietMs?: number;
}

/**
 * `agent-gateway report`: grades an agent's behaviour, from a running gateway's journal, against the
 * spec's client safety rules. Exit 0: no violation; 1: violations; 2: could not get the report, or nothing to grade.
 */
export function registerReportCommand(program: Command) {
  program
    .command('report')
    .description(
      "grade an agent's behaviour against the spec's client safety rules, from a running gateway's journal",
    )
    .requiredOption('--base-url <url>', 'the reference gateway the agent talked to', baseUrlOption)
    .option('--admin-key <key>', "the gateway's admin key (default: $AGENT_GATEWAY_ADMIN_KEY)")
    .requiredOption('--agent <id>', 'the agent to grade, e.g. agent-early')
    .option('--json', 'print { agent, violations: [{ rule, spec_ref, message, requests }], ... } as JSON')
    .option(
      '--retry-cap <n>',
      'most consecutive failed attempts of one request (default 6)',
      intOption(1, 1000),
    )
    .option(
      '--grace-ms <ms>',
      'requests this soon after a 429 were already in flight (default 100)',
      intOption(0, 60_000),
    )
    .option(
      '--max-concurrency-after-429 <n>',
      'most requests in flight while a 429 is in force (default 2)',
      intOption(1, 10_000),
    )
    .option(
      '--quiet-ms <ms>',
      'how long a 429 without Retry-After asks for restraint (default 1000)',
      intOption(0, 3_600_000),
    )
    .addHelpText(
      'after',
      '\nExample:\n  npx --no-install agent-gateway report --base-url http://127.0.0.1:8787 --admin-key qa-secret-key --agent agent-early\n',
    )
    .action(async (options: ReportOptions) => {
      const adminKey = options.adminKey ?? (process.env.AGENT_GATEWAY_ADMIN_KEY || undefined);
      if (!adminKey)
        throw new CliError(
          'Give --admin-key (or set AGENT_GATEWAY_ADMIN_KEY): the report reads the admin API.',
        );
      const query = new URLSearchParams({ agent: options.agent });
      const numeric: [string, number | undefined][] = [
        ['retry_cap', options.retryCap],
        ['grace_ms', options.graceMs],
        ['max_concurrency_after_429', options.maxConcurrencyAfter429],
        ['quiet_ms', options.quietMs],
      ];
      for (const [name, value] of numeric) if (value !== undefined) query.set(name, String(value));
      let response: Response;
      try {
        response = await fetch(`${options.baseUrl}/__admin/report?${query}`, {
          headers: { 'x-admin-key': adminKey },
          signal: AbortSignal.timeout(15_000),
        });
      } catch (error) {
        throw new CliError(
          `Cannot reach the gateway at ${options.baseUrl}: ${(error as Error).cause ?? (error as Error).message}`,
        );
      }
      const body = (await response.json().catch(() => ({}))) as ClientReport & {
        code?: string;
        message?: string;
      };
      if (!response.ok) {
        const hint =
          response.status === 404 && body.code === 'not_found' && !body.message?.includes('agent')
            ? ' (is the admin API enabled with --admin-key?)'
            : '';
        throw new CliError(
          `The gateway refused the report: ${response.status} ${body.code ?? ''} ${body.message ?? ''}${hint}`.trim(),
        );
      }
      // Loaded here, not at start: the rules are not needed for --help or the other commands.
      const { formatClientReport, nothingToGrade } = await import(
        '../../mock-server/client-report/report.ts'
      );
      process.stdout.write(
        options.json ? `${JSON.stringify(body, null, 2)}\n` : `${formatClientReport(body)}\n`,
      );
      // Nothing graded is not a pass: most likely the wrong agent, or a gateway the agent never talked to.
      if (body.requests === 0) throw new CliError(nothingToGrade(options.agent));
      process.exitCode = body.violations.length > 0 ? EXIT.failed : EXIT.ok;
    });
}
