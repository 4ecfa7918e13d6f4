/**
 * The GitHub Action's one step (action.yml): runs `agent-gateway check` with the action's inputs, writes
 * the JUnit, JSON and Markdown reports, adds the Markdown to the job's step summary and sets the outputs.
 * Uploads nothing. It reads everything from the environment, as GitHub gives it, so it runs the same
 * locally:
 *
 *   INPUT_BASE_URL=http://127.0.0.1:8787 INPUT_API_KEY=ak_verified_2b8d4f6a1c9e \
 *   GITHUB_STEP_SUMMARY=summary.md node --import tsx scripts/github-action.ts
 *
 * Exit code: the CLI's (0 no MUST check failed, 1 a check failed, 2 could not run).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../conformance/token-value.ts';

const CLI = fileURLToPath(new URL('./agent-gateway.mjs', import.meta.url));

/** The action's inputs, as action.yml passes them (empty means not given). */
export interface ActionInputs {
  baseUrl: string;
  tokenCommand: string;
  apiKey: string;
  deniedTokenCommand: string;
  deniedApiKey: string;
  idpUrl: string;
  deniedTool: string;
  strict: boolean;
  seed: string;
  numRuns: string;
  only: string;
  reportsDir: string;
}

export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const input = (name: string) => (env[`INPUT_${name}`] ?? '').trim();
  return {
    baseUrl: input('BASE_URL'),
    tokenCommand: input('TOKEN_COMMAND'),
    apiKey: input('API_KEY'),
    deniedTokenCommand: input('DENIED_TOKEN_COMMAND'),
    deniedApiKey: input('DENIED_API_KEY'),
    idpUrl: input('IDP_URL'),
    deniedTool: input('DENIED_TOOL') || 'web.search',
    strict: /^(true|yes|1)$/i.test(input('STRICT')),
    seed: input('SEED'),
    numRuns: input('NUM_RUNS'),
    only: input('ONLY'),
    reportsDir: input('REPORTS_DIR') || 'agent-gateway-reports',
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
  if (inputs.tokenCommand && inputs.apiKey) throw new InputError('Give token-command or api-key, not both.');
  if (!inputs.tokenCommand && !inputs.apiKey)
    throw new InputError(
      'Give token-command or api-key (a secret): most checks need a valid identity token, minted fresh.',
    );
  if (inputs.deniedTokenCommand && inputs.deniedApiKey)
    throw new InputError('Give denied-token-command or denied-api-key, not both.');
  const idpUrl = inputs.idpUrl || inputs.baseUrl;
  const dir = resolve(workspace, inputs.reportsDir);
  const reports = {
    junit: resolve(dir, 'conformance.xml'),
    json: resolve(dir, 'conformance.json'),
    markdown: resolve(dir, 'conformance.md'),
  };
  const args = [
    'check',
    '--base-url',
    inputs.baseUrl,
    '--token-command',
    inputs.tokenCommand || apiKeyCommand(idpUrl, 'validKey'),
  ];
  if (inputs.deniedTokenCommand || inputs.deniedApiKey)
    args.push('--denied-token-command', inputs.deniedTokenCommand || apiKeyCommand(idpUrl, 'deniedKey'));
  args.push('--denied-tool', inputs.deniedTool);
  if (inputs.strict) args.push('--strict');
  if (inputs.seed) args.push('--seed', inputs.seed);
  if (inputs.numRuns) args.push('--num-runs', inputs.numRuns);
  if (inputs.only) args.push('--only', inputs.only);
  args.push(
    '--report-junit',
    reports.junit,
    '--report-json',
    reports.json,
    '--report-markdown',
    reports.markdown,
  );
  return { args, reports };
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
  const inputs = readInputs(env);
  const secrets = [inputs.apiKey, inputs.deniedApiKey];
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
