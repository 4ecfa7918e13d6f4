import type { Command } from 'commander';
import type { ClientReport } from '../../mock-server/client-report/report.ts';
import { CliError, EXIT } from '../cli-options.ts';
import { addOptionFlags, camelOf } from '../option-flags.ts';
import { REPORT_OPTION_ROWS } from '../option-tables.ts';
import { type ConnectionOptions, connected } from './admin-connection.ts';

/** What the report is asked with: where, the key, the agent, JSON or text, and the rules' thresholds. */
interface ReportOptions {
  baseUrl: string;
  adminKey?: string;
  agent: string;
  json?: boolean;
  /** The thresholds, by commander's names (retryCap, graceMs, ...): reportOptionsSchema's fields. */
  [threshold: string]: unknown;
}

/** The flags of the client rules' thresholds (reportOptionsSchema), on `report` and `admin report`. */
const withThresholds = (command: Command) =>
  addOptionFlags(command, REPORT_OPTION_ROWS, {}, { defaultInHelpOnly: true });

/**
 * Asks a running gateway for an agent's client report and prints it. Exit 0: no violation and every rule
 * observed; 1: violations; 2: could not get the report, nothing to grade (a CliError), or a rule not observed.
 */
export async function printReport(options: ReportOptions): Promise<void> {
  const adminKey = options.adminKey ?? (process.env.AGENT_GATEWAY_ADMIN_KEY || undefined);
  if (!adminKey)
    throw new CliError('Give --admin-key (or set AGENT_GATEWAY_ADMIN_KEY): the report reads the admin API.');
  const query = new URLSearchParams({ agent: options.agent });
  for (const row of REPORT_OPTION_ROWS) {
    const value = options[camelOf(row.flag)];
    if (value !== undefined) query.set(row.query, String(value));
  }
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
  const { formatClientReport, nothingToGrade, unobservedRules } = await import(
    '../../mock-server/client-report/report.ts'
  );
  process.stdout.write(options.json ? `${JSON.stringify(body, null, 2)}\n` : `${formatClientReport(body)}\n`);
  // Nothing graded is not a pass: most likely the wrong agent, or a gateway the agent never talked to.
  if (body.requests === 0) throw new CliError(nothingToGrade(options.agent));
  // A rule the journal could not observe is no pass (green means seen): the report could not do its job.
  process.exitCode =
    body.violations.length > 0
      ? EXIT.failed
      : unobservedRules({ rules: body.rules ?? [] }).length > 0
        ? EXIT.cannotRun
        : EXIT.ok;
}

/** The agent to grade: the argument or `--agent` (one of them; both only when they agree). */
export function agentOf(argument: string | undefined, option: unknown): string {
  const flag = typeof option === 'string' ? option : undefined;
  if (argument !== undefined && flag !== undefined && argument !== flag)
    throw new CliError(`Two agents given (${argument} and --agent ${flag}): grade one at a time.`);
  const agent = argument ?? flag;
  if (agent === undefined) throw new CliError('Give the agent to grade: report AGENT (or --agent AGENT).');
  return agent;
}

/**
 * `agent-gateway report [AGENT]` and its alias `agent-gateway admin report [AGENT]`: one command, declared
 * here once and registered under both parents, so both take the same flags with the same defaults
 * (`--base-url` http://127.0.0.1:8787, `--admin-key` or $AGENT_GATEWAY_ADMIN_KEY, the agent as an argument
 * or `--agent`, `--json`, the rules' thresholds). Grades an agent's behaviour, from a running gateway's
 * journal, against the spec's client safety rules. Exit 0: no violation, every rule observed; 1: violations;
 * 2: could not get the report, nothing to grade, or a rule not observed (a proxy that did not know the
 * agent's API key).
 */
export function registerReportCommand(parent: Command) {
  withThresholds(
    connected(
      parent
        .command('report [agent]')
        .description(
          "grade an agent's behaviour against the spec's client safety rules, from a running gateway's journal",
        ),
    ).option('--agent <id>', 'the agent to grade, e.g. agent-early (or give it as the argument)'),
  )
    .addHelpText(
      'after',
      '\nThe same command as `agent-gateway report` and `agent-gateway admin report`, with the same defaults.\n\nExample:\n  npx --no-install agent-gateway report agent-early --base-url http://127.0.0.1:8787 --admin-key qa-secret-key\n',
    )
    .action((agent: string | undefined, options: ConnectionOptions & Record<string, unknown>) =>
      printReport({ ...options, agent: agentOf(agent, options.agent) }),
    );
}
