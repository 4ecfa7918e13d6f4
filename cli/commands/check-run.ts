import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ConformanceReport } from '../../conformance/report-summary.ts';
import { formatCheckLine, formatSummary, painter } from '../../conformance/reporters/console.ts';
import { toJsonReport } from '../../conformance/reporters/json.ts';
import { toJunitXml } from '../../conformance/reporters/junit.ts';
import { toMarkdownSummary } from '../../conformance/reporters/markdown.ts';
import type { SuiteOptions, SuiteOptionsInput } from '../../conformance/suite-options.ts';
import { commandToken, staticToken, type TokenSource } from '../../conformance/token-source.ts';
import { shellQuote } from '../../conformance/token-value.ts';
import type { CheckResult, Reproduction } from '../../conformance/types.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import { SPEC_TOOL_NAMES } from '../../vocabulary/tools.ts';
import { CliError, EXIT } from '../cli-options.ts';
import { camelOf } from '../option-flags.ts';
import { SUITE_OPTION_ROWS } from '../option-tables.ts';

/* What `agent-gateway check` does once its flags are parsed (check.ts declares them): tokens, the opening
 * lines, the run, the unobserved checks' remedies and the report files, each a step of `runCheck`. */

/** The flags of `check` that are not the suite's options: the target, tokens, reports, listing. */
export interface CheckInputs {
  baseUrl?: string;
  token?: string;
  tokenCommand?: string;
  deniedToken?: string;
  deniedTokenCommand?: string;
  expiredToken?: string;
  expiredTokenCommand?: string;
  reportJson?: string;
  reportJunit?: string;
  reportMarkdown?: string;
  reportHtml?: string;
  adviceFor: 'cli' | 'action';
  list?: boolean;
  /** commander keeps `--tool`'s values under its flag's name. */
  tool?: string[];
}

/** What commander parses: those flags and the suite's options (suiteOptionsSchema), by the schema's types. */
export type CheckOptions = CheckInputs & SuiteOptionsInput;

/**
 * The suite's options out of the parsed flags, under the schema's keys (a flag may be named otherwise:
 * `--tool` fills `tools`); flags not given stay absent, so the runner fills in the defaults, once.
 */
export function suiteOptionsOf(options: Record<string, unknown>): SuiteOptionsInput {
  return Object.fromEntries(
    SUITE_OPTION_ROWS.map((row) => [row.key, options[camelOf(row.flag)]]).filter(
      ([, value]) => value !== undefined,
    ),
  ) as SuiteOptionsInput;
}

/** A static token (flag or environment) or a command; none at all is allowed (the caller decides). */
export function tokenSource(
  label: string,
  value: string | undefined,
  command: string | undefined,
  variable: string,
): TokenSource | undefined {
  if (value !== undefined && command !== undefined)
    throw new CliError(`Give --${label} or --${label}-command, not both.`);
  if (command !== undefined) return commandToken(command, variable);
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new CliError(`--${label} is empty.`);
  return staticToken(value, variable);
}

/** An environment variable, with an empty value counted as unset. */
const fromEnv = (name: string) => process.env[name] || undefined;

/** The run's valid and denied tokens: flag, else command, else the environment; a valid one is required. */
export function checkTokens(options: CheckOptions): { token: TokenSource; deniedToken?: TokenSource } {
  // The environment is a fallback: a command given on the command line wins over an exported token.
  const token = tokenSource(
    'token',
    options.token ?? (options.tokenCommand ? undefined : fromEnv('AGENT_GATEWAY_TOKEN')),
    options.tokenCommand,
    '$TOKEN',
  );
  if (!token)
    throw new CliError(
      'Give --token or --token-command (or set AGENT_GATEWAY_TOKEN): most checks need a valid identity token.',
    );
  const deniedToken = tokenSource(
    'denied-token',
    options.deniedToken ?? (options.deniedTokenCommand ? undefined : fromEnv('AGENT_GATEWAY_DENIED_TOKEN')),
    options.deniedTokenCommand,
    '$DENIED_TOKEN',
  );
  return { token, ...(deniedToken && { deniedToken }) };
}

function writeReport(file: string, text: string) {
  const path = resolve(file);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  } catch (error) {
    throw new CliError(`Cannot write the report ${path}: ${(error as Error).message}`);
  }
}

/** The command that replays one counterexample; tokens stay in $TOKEN / $DENIED_TOKEN. */
export function replayCommand(options: CheckOptions) {
  return (check: CheckResult, reproduction: Reproduction) => {
    const parts = ['npx --no-install agent-gateway check', `--base-url ${shellQuote(options.baseUrl ?? '')}`];
    if (options.tokenCommand) parts.push(`--token-command ${shellQuote(options.tokenCommand)}`);
    else parts.push('--token "$TOKEN"');
    if (options.deniedTokenCommand)
      parts.push(`--denied-token-command ${shellQuote(options.deniedTokenCommand)}`);
    else if (options.deniedToken !== undefined) parts.push('--denied-token "$DENIED_TOKEN"');
    for (const tool of options.tool ?? []) parts.push(`--tool ${shellQuote(tool)}`);
    if (options.deniedTool !== undefined) parts.push(`--denied-tool ${options.deniedTool}`);
    if (options.allowedTools) parts.push(`--allowed-tools ${options.allowedTools.join(',') || 'none'}`);
    if (options.searchBody) parts.push(`--search-body ${shellQuote(options.searchBody)}`);
    if (options.fetchBody) parts.push(`--fetch-body ${shellQuote(options.fetchBody)}`);
    parts.push(
      `--only ${check.id}`,
      `--seed ${reproduction.seed}`,
      `--path ${shellQuote(reproduction.path ?? '')}`,
    );
    return parts.join(' ');
  };
}

// The checks and the runner (fast-check, every property) load when the command runs, not at start.
async function listChecks(): Promise<string> {
  const { CHECKS } = await import('../../conformance/checks/index.ts');
  return CHECKS.map(
    (c) => `${c.id.padEnd(36)} ${c.level.padEnd(6)} ${formatSpecRef(c.specRef).padEnd(24)} ${c.title}`,
  ).join('\n');
}

/** The lines printed before the run: target, checks, skipped ones, tools, budget and accepted unobserved. */
export function checkPreamble(
  options: CheckOptions,
  checks: readonly { id: string; needs?: readonly string[] }[],
  suite: Pick<SuiteOptions, 'numRuns' | 'timeBudgetSeconds' | 'maxWaitSeconds'>,
  hasDeniedToken: boolean,
): string {
  const needDenied = checks.filter((c) => c.needs?.includes('deniedToken')).map((c) => c.id);
  const skipNote =
    hasDeniedToken || needDenied.length === 0
      ? ''
      : ` (no denied token: ${needDenied.join(', ')} will be skipped)`;
  const declared = (options.tool ?? []).map((tool) => tool.split('=')[0] ?? tool);
  const names = declared.length > 0 ? declared : [...SPEC_TOOL_NAMES];
  const narrowed = names.filter((tool) => options.allowedTools && !options.allowedTools.includes(tool));
  const toolNote = `\nTools: ${names.join(', ')}${declared.length > 0 ? ' (--tool)' : " (the spec's; declare your gateway's with --tool NAME=PATH)"}${
    narrowed.length > 0
      ? `\n--allowed-tools ${options.allowedTools?.join(',') || 'none'}: ${narrowed.join(' and ')} not called with $TOKEN (skipped, not passed)`
      : ''
  }`;
  return `Agent Tool Gateway conformance: ${options.baseUrl}\n${checks.length} checks, ${suite.numRuns} cases per property${skipNote}${toolNote}\nTime budget ${suite.timeBudgetSeconds} s (--time-budget-seconds), waits paced to the gateway's limits, each at most ${suite.maxWaitSeconds} s (--max-wait-seconds)${options.allowUnobserved ? `\nAccepted unobserved (--allow-unobserved): ${options.allowUnobserved.join(', ')}` : ''}\n\n`;
}

/** Names, on stderr, why the run could not judge: no check ran, or which unobserved checks block it. */
async function explainExit(report: ConformanceReport, exitCode: number, strict: boolean) {
  if (report.summary.executed === 0)
    process.stderr.write('agent-gateway: no check could run (see the reasons above).\n');
  else if (exitCode === 2) {
    const { blockingUnobserved, remedyOf } = await import('../../conformance/unobserved.ts');
    for (const c of blockingUnobserved(report.checks, strict, report.allowedUnobserved))
      process.stderr.write(
        `agent-gateway: ${c.id} (${c.level}) was not observed: ${c.unobserved ? remedyOf(c.unobserved) : c.message}; or accept it with --allow-unobserved ${c.id}\n`,
      );
  }
}

/** Writes the report files asked for (JSON, JUnit, Markdown, HTML). */
async function writeReports(options: CheckOptions, report: ConformanceReport, exitCode: number) {
  if (options.reportJson)
    writeReport(options.reportJson, `${JSON.stringify(toJsonReport(report, exitCode), null, 2)}\n`);
  if (options.reportJunit) writeReport(options.reportJunit, toJunitXml(report));
  if (options.reportMarkdown)
    writeReport(options.reportMarkdown, toMarkdownSummary(report, exitCode, options.adviceFor));
  if (options.reportHtml) {
    // Loaded only when asked for: the other runs do not pay for it.
    const { toHtmlReport } = await import('../../conformance/reporters/html.ts');
    writeReport(options.reportHtml, toHtmlReport(report, exitCode));
  }
}

/** `check`'s action: list, or parse the options, take the tokens, run, print, explain and write the reports. */
export async function runCheck(options: CheckOptions) {
  if (options.list) {
    process.stdout.write(`${await listChecks()}\n`);
    return;
  }
  const { CannotRunError, exitCodeFor, runConformance, selectChecks } = await import(
    '../../conformance/runner.ts'
  );
  const { parseSuiteOptions } = await import('../../conformance/suite-options.ts');
  const given = suiteOptionsOf(options as unknown as Record<string, unknown>);
  let suite: ReturnType<typeof parseSuiteOptions>;
  try {
    suite = parseSuiteOptions(given);
  } catch (error) {
    if (error instanceof CannotRunError) throw new CliError(error.message, EXIT.cannotRun);
    throw error;
  }
  if (!options.baseUrl) throw new CliError('--base-url is required (the gateway to check).');
  if (options.path && (options.seed === undefined || !options.only)) {
    throw new CliError('--path replays one counterexample: give it with --seed and --only.');
  }
  const { token, deniedToken } = checkTokens(options);
  const paint = painter(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const checks = selectChecks(options.only);
  process.stdout.write(checkPreamble(options, checks, suite, deniedToken !== undefined));
  let report: ConformanceReport;
  try {
    report = await runConformance({
      // The suite's options as the flags gave them (schema keys); the runner applies the defaults.
      ...given,
      baseUrl: options.baseUrl,
      token,
      deniedToken,
      expiredToken: tokenSource(
        'expired-token',
        options.expiredToken,
        options.expiredTokenCommand,
        '$EXPIRED_TOKEN',
      ),
      log: (line) => process.stderr.write(`${line}\n`),
      onResult: (result) => process.stdout.write(`${formatCheckLine(result, paint)}\n`),
      replayCommand: replayCommand(options),
    });
  } catch (error) {
    if (error instanceof CannotRunError) throw new CliError(error.message, EXIT.cannotRun);
    throw error;
  }
  const exitCode = exitCodeFor(report, suite.strict);
  process.stdout.write(`${formatSummary(report, exitCode, paint)}\n`);
  await explainExit(report, exitCode, suite.strict);
  await writeReports(options, report, exitCode);
  process.exitCode = exitCode;
}
