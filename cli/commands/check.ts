import { type Command, InvalidArgumentError, Option } from 'commander';
import { TOKEN_ROLES } from '../check-token-options.ts';
import { baseUrlOption } from '../cli-options.ts';
import { addOptionFlags, type FlagSettings } from '../option-flags.ts';
import { SUITE_OPTION_ROWS } from '../option-tables.ts';
import type { CheckOptions } from './check-run.ts';

export { suiteOptionsOf } from './check-run.ts';

/* `agent-gateway check`'s flags and help; what it does with them is check-run.ts's `runCheck`. */

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
  tools: { placeholder: 'name[:write-like]=path[=body|=@file]' },
  allowedTools: { placeholder: 'tools', parse: toolList },
  deniedTool: { placeholder: 'tool' },
  tier: { placeholder: 'name' },
  deniedTier: { placeholder: 'name' },
  only: { placeholder: 'ids', parse: idList },
  expectedResults: { placeholder: 'file' },
  openapi: { placeholder: 'file|url' },
  allowUnobserved: { placeholder: 'ids', parse: idList },
  path: { placeholder: 'path' },
  // Left to the runner: a replay command names a body only when the user gave one.
  searchBody: { placeholder: 'json', defaultInHelpOnly: true },
  fetchBody: { placeholder: 'json', defaultInHelpOnly: true },
};

/**
 * `agent-gateway check`: the conformance suite against any gateway, for CI. Exit 0: no MUST check
 * failed (with --strict, no SHOULD either); 1: a check failed; 2: the suite could not do its job.
 */
export function registerCheckCommand(program: Command) {
  const command = program
    .command('check')
    .description('run the conformance suite against a gateway over HTTP')
    .option('--base-url <url>', 'the gateway to check, e.g. https://staging.example.com', baseUrlOption);
  // Each token role's pair of flags (TOKEN_ROLES, declared once with the Action's inputs).
  for (const role of TOKEN_ROLES)
    command
      .option(`--${role.flag} <token>`, role.description)
      .option(`--${role.flag}-command <cmd>`, role.commandDescription);
  addOptionFlags(
    command,
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
      '\nThe tools: web.search and web.fetch at the spec\'s paths, unless --tool names the gateway\'s own (only those are\nchecked; e.g. --tool web.search --tool web.extract=/v1/web/extract for a gateway without web.fetch). A body may\nbe read from a file (--tool web.extract=/v1/web/extract=@extract.json); a write-like tool (spec §7) is declared\nNAME:write-like=PATH: the suite sends it an Idempotency-Key and checks that a repeat with the key is safe.\nThe token: --token must be allowed to call whoami and every tool checked; for a token that cannot, name what it\nmay call with --allowed-tools (e.g. --allowed-tools web.fetch).\n\nExit codes: 0 every MUST check (with --strict, every SHOULD too) was observed and passed; 1 a check failed\n(or never saw the gateway serve a call it needs, or an --expected-results line is stale); 2 the suite could not\ndo its job: it could not run, or a MUST check (with --strict, a SHOULD too) could not observe its rule or could\nnot run for want of an input (each is named with the option that would let it observe; accept named ones with\n--allow-unobserved, or list them in an --expected-results file).\n\nExample:\n  npx agent-gateway check --base-url http://127.0.0.1:8787 \\\n    --token-command "npx agent-gateway token agent-verified" \\\n    --denied-token-command "npx agent-gateway token agent-early" --report-junit reports/conformance.xml\n',
    )
    // What it does is loaded when it runs: the suite and its reporters are not read at every CLI start.
    .action(async (options: CheckOptions) => (await import('./check-run.ts')).runCheck(options));
}
