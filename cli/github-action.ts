/**
 * The GitHub Action's one step (action.yml): runs `agent-gateway check` with the action's inputs, writes
 * the JUnit, JSON and Markdown reports, adds the Markdown to the job's step summary and sets the outputs.
 * Uploads nothing. It reads everything from the environment, as GitHub gives it, so it runs the same
 * locally:
 *
 *   INPUT_BASE_URL=http://127.0.0.1:8787 INPUT_API_KEY=ak_verified_2b8d4f6a1c9e \
 *   GITHUB_STEP_SUMMARY=summary.md node --import tsx cli/github-action.ts
 *
 * Exit code: the CLI's (0 no MUST check failed, 1 a check failed, 2 could not run).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../conformance/model/token-value.ts';
import type { OptionRow } from '../mock-server/options/option-schema.ts';
import { TOKEN_ROLES } from './check-token-options.ts';
import { SUITE_OPTION_ROWS } from './option-tables.ts';

const CLI = fileURLToPath(new URL('./agent-gateway.mjs', import.meta.url));

/** The suite's options (suiteOptionsSchema) the action has an input for, as rows: every one. */
export const PASSED_ROWS = SUITE_OPTION_ROWS;

/**
 * The token roles' inputs (TOKEN_ROLES): a static token (a secret) is passed in its role's environment
 * variable, never on the command line; a command as the flag of the same name. The valid and denied token
 * commands are the action's own inputs (an API key may stand for them).
 */
export const TOKEN_INPUTS: Readonly<Record<string, { env: string } | 'command'>> = Object.fromEntries(
  TOKEN_ROLES.flatMap((role) => [
    [role.flag, { env: role.env }],
    ...(role.key === 'token' || role.key === 'deniedToken' ? [] : [[`${role.flag}-command`, 'command']]),
  ]),
);

/**
 * The options of `agent-gateway check` the action has no input of the same name for, and why: it sets
 * them itself. Every other option of the CLI is an input (test/github-action.test.ts holds the CLI, this
 * table and action.yml together).
 */
export const SET_BY_ACTION: Readonly<Record<string, string>> = {
  'report-json': 'written to reports-dir, and the report-json output',
  'report-junit': 'written to reports-dir, and the report-junit output',
  'report-markdown': 'written to reports-dir, added to the step summary',
  'advice-for': "set to action: the summary's advice names the action's inputs",
  list: 'lists the checks and exits: not a run',
};

/**
 * Inputs passed on to `agent-gateway check` as the option of the same name: a value, for `strict` a
 * switch, for a repeatable option (`tool`) one value per line, each passed as its own flag. They are the
 * suite's options (suiteOptionsSchema), all of them; the `args` input passes anything more as written (a
 * test checks that action.yml, this table, the schema and the CLI's options agree, so they cannot drift apart).
 */
export const PASSED_INPUTS: Readonly<Record<string, 'value' | 'switch' | 'lines'>> = Object.fromEntries(
  PASSED_ROWS.map((row) => [
    row.flag,
    row.type === 'boolean' ? 'switch' : row.repeatable ? 'lines' : 'value',
  ]),
);

/**
 * An input's description and default in action.yml, from its option row: the option's description as a
 * sentence, with its default when the input's own default is empty (empty: the CLI's default applies).
 * A choice or a switch has its default as the input's. The description may go on with advice for CI.
 */
export function actionInputOf(row: OptionRow): { description: string; default: string } {
  const own = row.choices || row.type === 'boolean' ? String(row.default ?? '') : '';
  const shown = row.default !== undefined && own === '' ? ` (default ${row.default})` : '';
  const sentence = `${row.description.charAt(0).toUpperCase()}${row.description.slice(1)}${shown}.`;
  return { description: sentence, default: own };
}

/** Inputs the action reads itself (secrets, where reports go, the Node version, the pass-through). */
export const OWN_INPUTS = [
  ...Object.keys(TOKEN_INPUTS),
  'base-url',
  'api-key',
  'token-command',
  'denied-api-key',
  'denied-token-command',
  'idp-url',
  'report-html',
  'reports-dir',
  'node-version',
  'args',
] as const;

export type PassedInput = string;

/** The action's inputs, as action.yml passes them (empty means not given). */
export interface ActionInputs {
  baseUrl: string;
  tokenCommand: string;
  apiKey: string;
  deniedTokenCommand: string;
  deniedApiKey: string;
  idpUrl: string;
  reportHtml: boolean;
  reportsDir: string;
  /** Extra `agent-gateway check` arguments, split as a shell would (quotes kept together). */
  args: string[];
  passed: Partial<Record<PassedInput, string>>;
  /** The token roles' inputs given (TOKEN_INPUTS), by input name. */
  tokens: Record<string, string>;
  /** Kept for readers of older versions: `passed.strict`. */
  strict: boolean;
  deniedTool: string;
  seed: string;
  numRuns: string;
  only: string;
}

const isTrue = (value: string) => /^(true|yes|1)$/i.test(value);

/** Splits a command line as a POSIX shell would for words: single and double quotes, backslashes. */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1] as string))
        word += text[++i];
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) throw new InputError(`The args input has an unclosed ${quote} quote: ${text}`);
  if (inWord) words.push(word);
  return words;
}

export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const input = (name: string) => (env[`INPUT_${name.toUpperCase().replace(/-/g, '_')}`] ?? '').trim();
  const passed: Partial<Record<PassedInput, string>> = {};
  for (const name of Object.keys(PASSED_INPUTS) as PassedInput[]) {
    const value = input(name);
    if (value) passed[name] = value;
  }
  // A choice's default, as action.yml gives it, also when the script runs without it (locally).
  for (const row of PASSED_ROWS) {
    const { default: fallback } = actionInputOf(row);
    if (fallback && row.type !== 'boolean') passed[row.flag] ??= fallback;
  }
  return {
    baseUrl: input('base-url'),
    tokenCommand: input('token-command'),
    apiKey: input('api-key'),
    deniedTokenCommand: input('denied-token-command'),
    deniedApiKey: input('denied-api-key'),
    idpUrl: input('idp-url'),
    reportHtml: isTrue(input('report-html')),
    reportsDir: input('reports-dir') || 'agent-gateway-reports',
    args: splitArgs(input('args')),
    passed,
    tokens: Object.fromEntries(
      Object.keys(TOKEN_INPUTS)
        .map((name) => [name, input(name)])
        .filter(([, value]) => value !== ''),
    ),
    strict: isTrue(passed.strict ?? ''),
    deniedTool: passed['denied-tool'] ?? '',
    seed: passed.seed ?? '',
    numRuns: passed['num-runs'] ?? '',
    only: passed.only ?? '',
  };
}

/** A problem with the inputs: reported like the CLI's own (exit 2), in the log and the summary. */
export class InputError extends Error {}

/**
 * The environment variables the token commands read: the API keys (never on a command line: process
 * lists, logs, the replay commands in the reports) and the harness's CLI, wherever the action runs from.
 */
export const ACTION_VARIABLES = {
  validKey: 'AGENT_GATEWAY_API_KEY',
  deniedKey: 'AGENT_GATEWAY_DENIED_API_KEY',
  cli: 'AGENT_GATEWAY_CLI',
} as const;

/**
 * A token command that exchanges an API key at the identity provider, each time the suite needs a fresh
 * token (identity tokens expire within the hour, so a CI secret holds the key, not a token).
 */
function apiKeyCommand(idpUrl: string, which: 'validKey' | 'deniedKey'): string {
  const key = which === 'validKey' ? '' : `AGENT_GATEWAY_API_KEY="$${ACTION_VARIABLES.deniedKey}" `;
  return `${key}node "$${ACTION_VARIABLES.cli}" token --base-url ${shellQuote(idpUrl)}`;
}

/** The `agent-gateway check` arguments for the inputs, and the files the reports go to. */
export function checkArguments(inputs: ActionInputs, workspace: string) {
  if (!inputs.baseUrl) throw new InputError('The base-url input is required (the gateway to check).');
  const validGiven = [
    inputs.tokenCommand && 'token-command',
    inputs.apiKey && 'api-key',
    inputs.tokens.token && 'token',
  ];
  if (validGiven.filter(Boolean).length > 1)
    throw new InputError(
      `Give one of token-command, api-key or token, not ${validGiven.filter(Boolean).join(' and ')}.`,
    );
  if (!inputs.tokenCommand && !inputs.apiKey && !inputs.tokens.token)
    throw new InputError(
      'Give token-command or api-key (a secret): most checks need a valid identity token, minted fresh.',
    );
  const deniedGiven = [
    inputs.deniedTokenCommand && 'denied-token-command',
    inputs.deniedApiKey && 'denied-api-key',
    inputs.tokens['denied-token'] && 'denied-token',
  ].filter(Boolean);
  if (deniedGiven.length > 1) throw new InputError(`Give one of ${deniedGiven.join(' or ')}, not both.`);
  for (const role of TOKEN_ROLES)
    if (inputs.tokens[role.flag] && inputs.tokens[`${role.flag}-command`])
      throw new InputError(`Give ${role.flag} or ${role.flag}-command, not both.`);
  const idpUrl = inputs.idpUrl || inputs.baseUrl;
  const dir = resolve(workspace, inputs.reportsDir);
  const reports = {
    junit: resolve(dir, 'conformance.xml'),
    json: resolve(dir, 'conformance.json'),
    markdown: resolve(dir, 'conformance.md'),
    ...(inputs.reportHtml && { html: resolve(dir, 'conformance.html') }),
  };
  const args = ['check', '--base-url', inputs.baseUrl];
  // A static token comes through its variable (TOKEN_INPUTS, `tokenVariables`), never on the command line.
  if (!inputs.tokens.token)
    args.push('--token-command', inputs.tokenCommand || apiKeyCommand(idpUrl, 'validKey'));
  if (inputs.deniedTokenCommand || inputs.deniedApiKey)
    args.push('--denied-token-command', inputs.deniedTokenCommand || apiKeyCommand(idpUrl, 'deniedKey'));
  for (const [name, kind] of Object.entries(TOKEN_INPUTS)) {
    const value = inputs.tokens[name];
    if (value && kind === 'command') args.push(`--${name}`, value);
  }
  for (const [name, kind] of Object.entries(PASSED_INPUTS)) {
    const value = inputs.passed[name];
    if (value === undefined) continue;
    if (kind === 'switch') {
      if (isTrue(value)) args.push(`--${name}`);
    } else if (kind === 'lines')
      for (const line of value
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean))
        args.push(`--${name}`, line);
    else args.push(`--${name}`, value);
  }
  args.push(
    '--report-junit',
    reports.junit,
    '--report-json',
    reports.json,
    '--report-markdown',
    reports.markdown,
    // The summary's advice names this action's inputs, not the CLI's options.
    '--advice-for',
    'action',
  );
  if (reports.html) args.push('--report-html', reports.html);
  // Every other option of the CLI, as the user wrote it (last: on a repeated option, the user's wins).
  args.push(...inputs.args);
  return { args, reports, env: tokenVariables(inputs) };
}

/** The static tokens given as inputs, in the variables the CLI reads them from (TOKEN_ROLES). */
function tokenVariables(inputs: ActionInputs): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, kind] of Object.entries(TOKEN_INPUTS)) {
    const value = inputs.tokens[name];
    if (value && kind !== 'command') env[kind.env] = value;
  }
  return env;
}

/** Secrets given to the action, taken out of anything it writes itself. */
const redact = (text: string, secrets: string[]) =>
  secrets.filter((s) => s.length >= 4).reduce((out, secret) => out.split(secret).join('***'), text);

function couldNotRun(reason: string): string {
  const fence = '`'.repeat(Math.max(3, ...[...reason.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `## Agent Tool Gateway conformance: ⛔ could not run\n\n${fence}text\n${reason}\n${fence}\n\nExit code 2: the suite did not judge the gateway (see the step's log).\n`;
}

/** Runs the action: the CLI's exit code, the summary appended, the outputs set. */
export async function runAction(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let inputs: ActionInputs;
  try {
    inputs = readInputs(env);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    process.stderr.write(`agent-gateway action: ${error.message}\n`);
    if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, couldNotRun(error.message));
    if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, 'exit-code=2\n');
    return 2;
  }
  const secrets = [
    inputs.apiKey,
    inputs.deniedApiKey,
    ...TOKEN_ROLES.map((role) => inputs.tokens[role.flag] ?? ''),
  ];
  const summary = env.GITHUB_STEP_SUMMARY;
  const output = env.GITHUB_OUTPUT;
  const write = (file: string | undefined, text: string) => {
    if (file) appendFileSync(file, text);
  };

  // The user's own token commands and paths are relative to their workspace, not to the harness.
  const workspace = env.GITHUB_WORKSPACE || process.cwd();
  let plan: ReturnType<typeof checkArguments>;
  try {
    plan = checkArguments(inputs, workspace);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    process.stderr.write(`agent-gateway action: ${error.message}\n`);
    write(summary, couldNotRun(error.message));
    write(output, 'exit-code=2\n');
    return 2;
  }

  const child = spawn(process.execPath, [CLI, ...plan.args], {
    cwd: workspace,
    env: {
      ...env,
      ...plan.env,
      [ACTION_VARIABLES.validKey]: inputs.apiKey,
      [ACTION_VARIABLES.deniedKey]: inputs.deniedApiKey,
      [ACTION_VARIABLES.cli]: CLI,
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderr += chunk.toString();
  });
  const code = await new Promise<number>((done) => child.once('close', (c) => done(c ?? 2)));

  if (existsSync(plan.reports.markdown)) write(summary, readFileSync(plan.reports.markdown, 'utf8'));
  else {
    // No report: the suite stopped before judging. Its reason is the CLI's own `agent-gateway:` line.
    const reason = stderr
      .split('\n')
      .filter((line) => line.startsWith('agent-gateway:'))
      .join('\n');
    write(summary, couldNotRun(redact(reason || `agent-gateway check exited with ${code}`, secrets)));
  }
  write(output, `exit-code=${code}\n`);
  for (const [name, file] of Object.entries(plan.reports))
    if (existsSync(file)) write(output, `report-${name}=${file}\n`);
  return code;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runAction();
}
