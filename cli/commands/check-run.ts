import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CheckResult, Reproduction } from '../../conformance/model/check-result.ts';
import { shellQuote } from '../../conformance/model/token-value.ts';
import { formatCheckLine, formatSummary, painter } from '../../conformance/reporters/console.ts';
import { toJsonReport } from '../../conformance/reporters/json.ts';
import { toJunitXml } from '../../conformance/reporters/junit.ts';
import { toMarkdownSummary } from '../../conformance/reporters/markdown.ts';
import type { ConformanceReport } from '../../conformance/run/report-summary.ts';
import type { SuiteOptions, SuiteOptionsInput } from '../../conformance/suite/suite-options.ts';
import { WRITE_LIKE_MARK } from '../../conformance/suite/suite-tools.ts';
import { commandToken, staticToken, type TokenSource } from '../../conformance/tokens/token-source.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import { SPEC_TOOL_NAMES } from '../../vocabulary/tools.ts';
import { TOKEN_ROLES, type TokenRole } from '../check-token-options.ts';
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
  revokedToken?: string;
  revokedTokenCommand?: string;
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

type RunTokenSources = { token: TokenSource } & Partial<
  Record<'deniedToken' | 'expiredToken' | 'revokedToken', TokenSource>
>;

/**
 * The run's tokens, by role (TOKEN_ROLES): flag, else command, else the role's environment variable; a
 * valid one is required.
 */
export function checkTokens(options: CheckOptions): RunTokenSources {
  const given = options as unknown as Record<string, string | undefined>;
  const sources: Partial<Record<TokenRole['key'], TokenSource>> = {};
  for (const role of TOKEN_ROLES) {
    const command = given[camelOf(`${role.flag}-command`)];
    // The environment is a fallback: a command given on the command line wins over an exported token.
    const value = given[camelOf(role.flag)] ?? (command ? undefined : fromEnv(role.env));
    const source = tokenSource(role.flag, value, command, role.variable);
    if (source) sources[role.key] = source;
  }
  const { token, ...others } = sources;
  if (!token)
    throw new CliError(
      'Give --token or --token-command (or set AGENT_GATEWAY_TOKEN): most checks need a valid identity token.',
    );
  return { token, ...others };
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
    const given = options as unknown as Record<string, string | undefined>;
    for (const role of TOKEN_ROLES) {
      const command = given[camelOf(`${role.flag}-command`)];
      if (command) parts.push(`--${role.flag}-command ${shellQuote(command)}`);
      // The valid token always: from $TOKEN when it came from the environment.
      else if (role.key === 'token' || given[role.key] !== undefined)
        parts.push(`--${role.flag} "${role.variable}"`);
    }
    if (options.openapi) parts.push(`--openapi ${shellQuote(options.openapi)}`);
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
  given: Partial<Record<TokenRole['key'], unknown>>,
): string {
  // Each token role not given, and the checks it leaves unobserved (a MUST one makes the run exit 2).
  const notes = TOKEN_ROLES.filter((role) => given[role.key] === undefined).flatMap((role) => {
    const ids = checks.filter((c) => c.needs?.includes(role.key)).map((c) => c.id);
    return ids.length > 0
      ? [`no ${role.flag.replace('-', ' ')} (--${role.flag}): ${ids.join(', ')} will be skipped`]
      : [];
  });
  const skipNote = notes.length > 0 ? ` (${notes.join('; ')})` : '';
  // NAME, or NAME:write-like, before the path (the body, perhaps a file, is the runner's to read).
  const declared = (options.tool ?? []).map((tool) => {
    const head = (tool.split('=')[0] ?? tool).trim();
    return head.endsWith(WRITE_LIKE_MARK) ? `${head.slice(0, -WRITE_LIKE_MARK.length)} (write-like)` : head;
  });
  const names = declared.length > 0 ? declared : [...SPEC_TOOL_NAMES];
  const narrowed = names
    .map((tool) => tool.replace(' (write-like)', ''))
    .filter((tool) => options.allowedTools && !options.allowedTools.includes(tool));
  const source = options.openapi
    ? `those of the OpenAPI document ${options.openapi} (--openapi)${declared.length > 0 ? `, and ${declared.join(', ')} (--tool)` : ''}`
    : `${names.join(', ')}${declared.length > 0 ? ' (--tool)' : " (the spec's; declare your gateway's with --tool NAME=PATH or --openapi)"}`;
  const toolNote = `\nTools: ${source}${
    narrowed.length > 0
      ? `\n--allowed-tools ${options.allowedTools?.join(',') || 'none'}: ${narrowed.join(' and ')} not called with $TOKEN (skipped, not passed)`
      : ''
  }`;
  return `Agent Tool Gateway conformance: ${options.baseUrl}\n${checks.length} checks, ${suite.numRuns} cases per property${skipNote}${toolNote}\nTime budget ${suite.timeBudgetSeconds} s (--time-budget-seconds), waits paced to the gateway's limits, each at most ${suite.maxWaitSeconds} s (--max-wait-seconds)${options.allowUnobserved ? `\nAccepted unobserved (--allow-unobserved): ${options.allowUnobserved.join(', ')}` : ''}\n\n`;
}

/**
 * Names, on stderr, why the run could not judge or failed for its expectations: no check ran, which
 * unobserved checks block it (with the option that enables each), which expected-results lines are stale.
 */
async function explainExit(report: ConformanceReport, exitCode: number, strict: boolean) {
  if (report.summary.executed === 0)
    process.stderr.write('agent-gateway: no check could run (see the reasons above).\n');
  else if (exitCode === 2) {
    const { blockingUnobserved, unobservedRemedy } = await import('../../conformance/run/unobserved.ts');
    for (const c of blockingUnobserved(
      report.checks,
      strict,
      report.allowedUnobserved,
      report.expectedResults,
    ))
      process.stderr.write(
        `agent-gateway: ${c.id} (${c.level}) was not observed${c.verdict === 'skipped' ? ' (skipped)' : ''}: ${unobservedRemedy(c)}; or accept it with --allow-unobserved ${c.id}, or list it in an --expected-results file as ${c.verdict}\n`,
      );
  }
  for (const stale of report.summary.stale ?? [])
    process.stderr.write(
      `agent-gateway: stale expectation: ${stale.id} was expected to be ${stale.expected} (--expected-results) and is ${stale.actual} now: remove or update its line\n`,
    );
}

/** Writes the report files asked for (JSON, JUnit, Markdown, HTML). */
async function writeReports(
  options: CheckOptions,
  report: ConformanceReport,
  exitCode: number,
  strict: boolean,
) {
  if (options.reportJson)
    writeReport(options.reportJson, `${JSON.stringify(toJsonReport(report, exitCode, strict), null, 2)}\n`);
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
    '../../conformance/run/runner.ts'
  );
  const { parseSuiteOptions } = await import('../../conformance/suite/suite-options.ts');
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
  const tokens = checkTokens(options);
  const paint = painter(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const checks = selectChecks(options.only);
  process.stdout.write(checkPreamble(options, checks, suite, tokens));
  let report: ConformanceReport;
  try {
    report = await runConformance({
      // The suite's options as the flags gave them (schema keys); the runner applies the defaults.
      ...given,
      baseUrl: options.baseUrl,
      ...tokens,
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
  await writeReports(options, report, exitCode, suite.strict);
  process.exitCode = exitCode;
}
