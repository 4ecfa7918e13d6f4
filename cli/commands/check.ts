import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { formatCheckLine, formatSummary, painter } from '../../conformance/reporters/console.ts';
import { toJsonReport } from '../../conformance/reporters/json.ts';
import { toJunitXml } from '../../conformance/reporters/junit.ts';
import { toMarkdownSummary } from '../../conformance/reporters/markdown.ts';
import type { SuiteOptionsInput } from '../../conformance/suite-options.ts';
import { commandToken, staticToken, type TokenSource } from '../../conformance/token-source.ts';
import { shellQuote } from '../../conformance/token-value.ts';
import type { CheckResult, Reproduction } from '../../conformance/types.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import { TOOL_NAMES } from '../../vocabulary/tools.ts';
import { baseUrlOption, CliError, EXIT } from '../cli-options.ts';
import { addOptionFlags, camelOf, type FlagSettings } from '../option-flags.ts';
import { SUITE_OPTION_ROWS } from '../option-tables.ts';

/** The flags of `check` that are not the suite's options: the target, tokens, reports, listing. */
interface CheckInputs {
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
type CheckOptions = CheckInputs & SuiteOptionsInput;

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

const idList = (value: string) => {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  if (ids.length === 0) throw new InvalidArgumentError('give at least one check id');
  return ids;
};

/**
 * `web.fetch`, `web.search,web.fetch`, or `none`: the tools the valid token may call (the runner checks
 * they are among the tools checked, `--tool`).
 */
const toolList = (value: string) => {
  if (value.trim() === 'none') return [];
  const tools = value
    .split(',')
    .map((tool) => tool.trim())
    .filter(Boolean);
  if (tools.length === 0) throw new InvalidArgumentError('give tool names (comma-separated), or none');
  return tools;
};

/** What `check` changes of the flags derived from the suite's options (their names in the help, lists). */
const SUITE_FLAGS: Record<string, FlagSettings> = {
  tools: { placeholder: 'name=path[=body]' },
  allowedTools: { placeholder: 'tools', parse: toolList },
  deniedTool: { placeholder: 'tool' },
  tier: { placeholder: 'name' },
  deniedTier: { placeholder: 'name' },
  only: { placeholder: 'ids', parse: idList },
  allowUnobserved: { placeholder: 'ids', parse: idList },
  path: { placeholder: 'path' },
  // Left to the runner: a replay command names a body only when the user gave one.
  searchBody: { placeholder: 'json', defaultInHelpOnly: true },
  fetchBody: { placeholder: 'json', defaultInHelpOnly: true },
};

/** A static token (flag or environment) or a command; none at all is allowed (the caller decides). */
function tokenSource(
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
function replayCommand(options: CheckOptions) {
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

/**
 * `agent-gateway check`: the conformance suite against any gateway, for CI. Exit 0: no MUST check
 * failed (with --strict, no SHOULD either); 1: a check failed; 2: the suite could not do its job.
 */
export function registerCheckCommand(program: Command) {
  addOptionFlags(
    program
      .command('check')
      .description('run the conformance suite against a gateway over HTTP')
      .option('--base-url <url>', 'the gateway to check, e.g. https://staging.example.com', baseUrlOption)
      .option(
        '--token <token>',
        'a valid identity token allowed to call both tools (default: $AGENT_GATEWAY_TOKEN; see --allowed-tools)',
      )
      .option(
        '--token-command <cmd>',
        'a shell command printing such a token as its last line; re-run when the token expires',
      )
      .option(
        '--denied-token <token>',
        'a valid token that may not call --denied-tool (default: $AGENT_GATEWAY_DENIED_TOKEN)',
      )
      .option('--denied-token-command <cmd>', 'a shell command printing such a token')
      .option(
        '--expired-token <token>',
        'optional: a genuine token past its lifetime; auth.expired-token checks it gets 401 invalid_identity_token (skipped without it)',
      )
      .option('--expired-token-command <cmd>', 'optional: a shell command printing such a token'),
    // The suite's tunable options (suiteOptionsSchema): flags, bounds, defaults and help derived from it.
    SUITE_OPTION_ROWS,
    SUITE_FLAGS,
    // The defaults are the runner's to apply (parseSuiteOptions), once; the help shows them.
    { defaultInHelpOnly: true },
  )
    .option('--report-json <file>', 'write the JSON report here')
    .option('--report-junit <file>', 'write a JUnit XML report here')
    .option(
      '--report-markdown <file>',
      'write a Markdown summary here (verdict table, failures with curl and replay; for a CI job page)',
    )
    .option(
      '--report-html <file>',
      'write an HTML report here (one self-contained file: verdicts by spec section, failures with their exchange, curl and replay)',
    )
    .addOption(
      new Option(
        '--advice-for <who>',
        "whose names the Markdown summary's advice uses (the GitHub Action passes action)",
      )
        .choices(['cli', 'action'])
        .default('cli')
        .hideHelp(),
    )
    .option('--list', 'list the checks (id, level, spec section, title) and exit')
    .addHelpText(
      'after',
      '\nThe tools: web.search and web.fetch at the spec\'s paths, unless --tool names the gateway\'s own (only those are\nchecked; e.g. --tool web.search --tool web.extract=/v1/web/extract for a gateway without web.fetch).\nThe token: --token must be allowed to call whoami and every tool checked; for a token that cannot, name what it\nmay call with --allowed-tools (e.g. --allowed-tools web.fetch).\n\nExit codes: 0 every MUST check (with --strict, every SHOULD too) was observed and passed; 1 a check failed\n(or never saw the gateway serve a call it needs); 2 the suite could not do its job: it could not run, or a\nMUST check (with --strict, a SHOULD too) could not observe its rule (each is named with the option that would\nlet it observe; accept named ones with --allow-unobserved).\n\nExample:\n  npx agent-gateway check --base-url http://127.0.0.1:8787 \\\n    --token-command "npx agent-gateway token agent-verified" \\\n    --denied-token-command "npx agent-gateway token agent-early" --report-junit reports/conformance.xml\n',
    )
    .action(async (options: CheckOptions) => {
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
        options.deniedToken ??
          (options.deniedTokenCommand ? undefined : fromEnv('AGENT_GATEWAY_DENIED_TOKEN')),
        options.deniedTokenCommand,
        '$DENIED_TOKEN',
      );
      const paint = painter(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
      const checks = selectChecks(options.only);
      const needDenied = checks.filter((c) => c.needs?.includes('deniedToken')).map((c) => c.id);
      const skipNote =
        deniedToken || needDenied.length === 0
          ? ''
          : ` (no denied token: ${needDenied.join(', ')} will be skipped)`;
      const declared = (options.tool ?? []).map((tool) => tool.split('=')[0] ?? tool);
      const names = declared.length > 0 ? declared : [...TOOL_NAMES];
      const narrowed = names.filter((tool) => options.allowedTools && !options.allowedTools.includes(tool));
      const toolNote = `\nTools: ${names.join(', ')}${declared.length > 0 ? ' (--tool)' : " (the spec's; declare your gateway's with --tool NAME=PATH)"}${
        narrowed.length > 0
          ? `\n--allowed-tools ${options.allowedTools?.join(',') || 'none'}: ${narrowed.join(' and ')} not called with $TOKEN (skipped, not passed)`
          : ''
      }`;
      process.stdout.write(
        `Agent Tool Gateway conformance: ${options.baseUrl}\n${checks.length} checks, ${suite.numRuns} cases per property${skipNote}${toolNote}\nTime budget ${suite.timeBudgetSeconds} s (--time-budget-seconds), waits paced to the gateway's limits, each at most ${suite.maxWaitSeconds} s (--max-wait-seconds)${options.allowUnobserved ? `\nAccepted unobserved (--allow-unobserved): ${options.allowUnobserved.join(', ')}` : ''}\n\n`,
      );
      let report: Awaited<ReturnType<typeof runConformance>>;
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
      if (report.summary.executed === 0)
        process.stderr.write('agent-gateway: no check could run (see the reasons above).\n');
      else if (exitCode === 2) {
        const { blockingUnobserved, remedyOf } = await import('../../conformance/unobserved.ts');
        for (const c of blockingUnobserved(report.checks, suite.strict, report.allowedUnobserved))
          process.stderr.write(
            `agent-gateway: ${c.id} (${c.level}) was not observed: ${c.unobserved ? remedyOf(c.unobserved) : c.message}; or accept it with --allow-unobserved ${c.id}\n`,
          );
      }
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
      process.exitCode = exitCode;
    });
}
