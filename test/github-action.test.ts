import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { registerCheckCommand } from '../cli/commands/check.ts';
import {
  actionInputOf,
  checkArguments,
  OWN_INPUTS,
  PASSED_INPUTS,
  readInputs,
  SET_BY_ACTION,
  splitArgs,
} from '../cli/github-action.ts';
import { SUITE_OPTION_ROWS } from '../cli/option-tables.ts';
import { toMarkdownSummary } from '../conformance/reporters/markdown.ts';
import type { ServeProcess } from '../dev/spawn-serve.ts';
import { loadConfig } from '../mock-server/config/load-config.ts';
import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import type { RunningTarget } from './gateways/proof-target.ts';
import { startServe } from './support/cli.ts';
import { checkResult, runReport } from './support/conformance-report.ts';

/**
 * The GitHub Action's script, run as action.yml runs it (node --import tsx cli/github-action.ts in the
 * harness's folder, inputs and GitHub's files in the environment), against a real `serve` process and a
 * faulty gateway.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const agentKey = (id: string) => loadConfig().agents.find((a) => a.id === id)?.api_key ?? '';

interface ActionRun {
  code: number;
  log: string;
  summary: string;
  outputs: Record<string, string>;
  workspace: string;
}

function runAction(inputs: Record<string, string>, env: Record<string, string> = {}): Promise<ActionRun> {
  const workspace = mkdtempSync(join(tmpdir(), 'github-action-'));
  const summaryFile = join(workspace, 'step-summary.md');
  const outputFile = join(workspace, 'github-output');
  // An earlier step wrote to the summary: the action adds to it.
  writeFileSync(summaryFile, '# earlier step\n');
  const inputEnv = Object.fromEntries(
    Object.entries(inputs).map(([name, value]) => [`INPUT_${name.toUpperCase().replace(/-/g, '_')}`, value]),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/github-action.ts'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          ...inputEnv,
          ...env,
          GITHUB_STEP_SUMMARY: summaryFile,
          GITHUB_OUTPUT: outputFile,
          GITHUB_WORKSPACE: workspace,
          NO_COLOR: '1',
        },
        timeout: 90_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const outputs = existsSync(outputFile)
          ? Object.fromEntries(
              readFileSync(outputFile, 'utf8')
                .trim()
                .split('\n')
                .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
            )
          : {};
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          log: stdout + stderr,
          summary: readFileSync(summaryFile, 'utf8'),
          outputs,
          workspace,
        });
      },
    );
  });
}

describe('action.yml', () => {
  const action = parseYaml(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { required?: boolean; default?: string }>;
    runs: { using: string; steps: { id?: string; env?: Record<string, string>; run?: string }[] };
  };

  it('is a composite action whose check step passes every input to the script, which reads each one', () => {
    expect(action.runs.using).toBe('composite');
    const step = action.runs.steps.find((s) => s.id === 'check');
    expect(step?.run).toBe('node --import tsx cli/github-action.ts');
    const passed = Object.keys(action.inputs).filter((name) => name !== 'node-version');
    expect(Object.keys(step?.env ?? {}).sort()).toEqual(
      passed.map((name) => `INPUT_${name.toUpperCase().replace(/-/g, '_')}`).sort(),
    );
    for (const name of passed) {
      const variable = `INPUT_${name.toUpperCase().replace(/-/g, '_')}`;
      expect(step?.env?.[variable]).toBe(`\${{ inputs.${name} }}`);
      // Each input changes what the script reads (strict is a flag; the others are text).
      const read = readInputs({
        [variable]: name === 'strict' || name === 'report-html' ? 'true' : 'x-value',
      });
      expect(JSON.stringify(read), name).not.toBe(JSON.stringify(readInputs({})));
    }
    expect(action.inputs['base-url']?.required).toBe(true);
  });

  it('takes every CLI option: an input of the same name, or one the action sets itself', () => {
    const program = new Command();
    registerCheckCommand(program);
    const check = program.commands.find((c) => c.name() === 'check');
    const cliNames = (check?.options ?? []).map((o) => o.long?.replace(/^--/, '') as string);
    const inputs = Object.keys(action.inputs);
    expect(cliNames.filter((name) => !inputs.includes(name) && !(name in SET_BY_ACTION))).toEqual([]);
    // What the action sets itself is no input, and is an option of the CLI.
    for (const name of Object.keys(SET_BY_ACTION)) {
      expect(inputs).not.toContain(name);
      expect(cliNames).toContain(name);
    }
    // Static tokens go in their variables, never on the command line; commands as their flags.
    const { args, env } = checkArguments(
      readInputs({
        INPUT_BASE_URL: 'http://127.0.0.1:1',
        INPUT_TOKEN: 'valid-secret',
        INPUT_EXPIRED_TOKEN: 'expired-secret',
        INPUT_REVOKED_TOKEN_COMMAND: 'printf %s revoked',
        INPUT_TIER: 'verified',
        INPUT_EXPECTED_RESULTS: 'expected.yaml',
      }),
      '/tmp',
    );
    expect(args.join(' ')).not.toMatch(/secret/);
    expect(env).toEqual({
      AGENT_GATEWAY_TOKEN: 'valid-secret',
      AGENT_GATEWAY_EXPIRED_TOKEN: 'expired-secret',
    });
    expect(args.join(' ')).toContain('--revoked-token-command printf %s revoked');
    expect(args.join(' ')).toContain('--tier verified');
    expect(args.join(' ')).toContain('--expected-results expected.yaml');
    expect(args).not.toContain('--token-command');
    expect(() =>
      checkArguments(
        readInputs({ INPUT_BASE_URL: 'http://x', INPUT_TOKEN: 't', INPUT_API_KEY: 'k' }),
        '/tmp',
      ),
    ).toThrow('Give one of token-command, api-key or token, not api-key and token.');
  });

  it("accepts every CLI option: named inputs are the CLI's own options, the rest go through args", async () => {
    const program = new Command();
    registerCheckCommand(program);
    const check = program.commands.find((c) => c.name() === 'check');
    const cliOptions = new Set((check?.options ?? []).map((o) => o.long?.replace(/^--/, '')));
    // Every input is either passed to the CLI under its own name or read by the action itself.
    const inputs = Object.keys(action.inputs);
    expect(
      inputs.filter((i) => !(i in PASSED_INPUTS) && !(OWN_INPUTS as readonly string[]).includes(i)),
    ).toEqual([]);
    expect([...OWN_INPUTS, ...Object.keys(PASSED_INPUTS)].filter((i) => !inputs.includes(i))).toEqual([]);
    for (const name of [...Object.keys(PASSED_INPUTS), ...OWN_INPUTS.filter((i) => i.includes('token'))])
      expect(cliOptions, name).toContain(name);
    // The options that matter most to a CI run have a named input (the issue's list); any other option
    // goes through args, appended last.
    for (const name of [
      'max-wait-seconds',
      'time-budget-seconds',
      'rate-limit-budget',
      'allowed-tools',
      'allow-unobserved',
      'search-body',
      'fetch-body',
    ])
      expect(inputs).toContain(name);
    expect(inputs).toContain('report-html');
    const { args } = checkArguments(
      readInputs({
        INPUT_BASE_URL: 'http://127.0.0.1:1',
        INPUT_TOKEN_COMMAND: 'echo t',
        INPUT_MAX_WAIT_SECONDS: '90',
        INPUT_REPORT_HTML: 'true',
        INPUT_ARGS: `--path 'long@whoami:3:1' --only "auth.invalid-token"`,
      }),
      '/tmp',
    );
    expect(args.join(' ')).toContain('--max-wait-seconds 90');
    expect(args).toContain('--report-html');
    expect(args.slice(-4)).toEqual(['--path', 'long@whoami:3:1', '--only', 'auth.invalid-token']);
    expect(splitArgs(`a "b c" 'd "e"' f\\ g`)).toEqual(['a', 'b c', 'd "e"', 'f g']);
  });

  it('has an input for every suite option (suiteOptionsSchema), described as the schema says', () => {
    const rows = SUITE_OPTION_ROWS.filter((row) => row.flag in PASSED_INPUTS);
    expect(rows.map((row) => row.flag).sort()).toEqual(Object.keys(PASSED_INPUTS).sort());
    // The options left to args are the CLI's, so args reaches them.
    const program = new Command();
    registerCheckCommand(program);
    const cliOptions = (program.commands[0]?.options ?? []).map((o) => o.long?.replace(/^--/, ''));
    for (const row of SUITE_OPTION_ROWS) expect(cliOptions, row.flag).toContain(row.flag);
    for (const row of rows) {
      const input = action.inputs[row.flag] as { description?: string; default?: string } | undefined;
      const expected = actionInputOf(row);
      // Its description starts as the schema's (it may go on with advice for CI); its default is the same.
      expect(input?.description?.replace(/\s+/g, ' ').startsWith(expected.description), row.flag).toBe(true);
      expect(input?.default, row.flag).toBe(expected.default);
      // The script reads the same default when GitHub does not pass one (a local run).
      if (expected.default && row.type !== 'boolean')
        expect(readInputs({}).passed[row.flag]).toBe(expected.default);
    }
  });

  it("the summary's advice names inputs the action has", () => {
    const checks = (['max-wait', 'rate-limit-budget', 'time-budget', 'token-refused'] as const).map(
      (unobserved, i) => checkResult({ id: `c${i}`, verdict: 'inconclusive', unobserved }),
    );
    const summary = toMarkdownSummary(runReport(checks), 2, 'action');
    const named = [...summary.matchAll(/\[([a-z-]+)\]/g)].map((m) => m[1]);
    expect(named.length).toBe(4);
    for (const name of named) expect(Object.keys(action.inputs)).toContain(name);
    expect(summary).not.toMatch(/What would let it observe:[^\n]*--max-wait-seconds/);
  });
});

const rows = (summary: string) => summary.split('\n').filter((line) => /^\| (✅|❌|⏭️|⚠️) /.test(line));

describe('the GitHub Action script', () => {
  let server: ServeProcess;
  let faulty: RunningTarget;
  beforeAll(async () => {
    const target = FAULTY_GATEWAYS.find((g) => g.id === 'health-requires-token');
    if (!target) throw new Error('no faulty gateway health-requires-token');
    [server, faulty] = await Promise.all([startServe(), target.start()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([server?.stop(), faulty?.close()]);
  });

  it('mints tokens from API key secrets, passes a conforming gateway, and writes reports, summary and outputs', async () => {
    const validKey = agentKey('agent-verified');
    const deniedKey = agentKey('agent-early');
    const run = await runAction({
      'base-url': server.url,
      'api-key': validKey,
      'denied-api-key': deniedKey,
      only: 'health.without-token,auth.missing-token,authz.access-denied,authz.whoami-any-tier,errors.json-body',
      'num-runs': '3',
      seed: '5',
      strict: 'true',
      'reports-dir': 'reports',
    });
    expect(run.code, run.log).toBe(0);
    expect(run.summary.startsWith('# earlier step\n## Agent Tool Gateway conformance: ✅ passed')).toBe(true);
    expect(rows(run.summary)).toHaveLength(5);
    expect(rows(run.summary).every((row) => row.startsWith('| ✅ pass |'))).toBe(true);
    // authz.access-denied ran: the denied key was exchanged too.
    expect(run.summary).toContain('| ✅ pass | MUST | `authz.access-denied` |');
    expect(run.summary).toContain('seed 5');
    for (const report of ['conformance.xml', 'conformance.json', 'conformance.md'])
      expect(existsSync(join(run.workspace, 'reports', report)), report).toBe(true);
    expect(run.outputs).toEqual({
      'exit-code': '0',
      'report-junit': join(run.workspace, 'reports', 'conformance.xml'),
      'report-json': join(run.workspace, 'reports', 'conformance.json'),
      'report-markdown': join(run.workspace, 'reports', 'conformance.md'),
    });
    const json = JSON.parse(readFileSync(run.outputs['report-json'] as string, 'utf8'));
    expect(json.summary).toMatchObject({ pass: 5, fail: 0, exit_code: 0 });
    for (const key of [validKey, deniedKey]) {
      expect(run.summary).not.toContain(key);
      expect(run.log).not.toContain(key);
    }
  }, 90_000);

  it('fails a faulty gateway (exit 1) with the failure, its curl reproduction and replay command in the summary', async () => {
    const run = await runAction(
      {
        'base-url': faulty.baseUrl,
        'token-command': 'printf %s "$TEST_TOKEN"',
        'denied-token-command': 'printf %s "$TEST_DENIED_TOKEN"',
        only: 'health.without-token,authz.whoami-any-tier',
        'num-runs': '3',
        seed: '9',
      },
      { TEST_TOKEN: faulty.token, TEST_DENIED_TOKEN: faulty.deniedToken },
    );
    expect(run.code, run.log).toBe(1);
    expect(run.summary).toContain('## Agent Tool Gateway conformance: ❌ failed');
    expect(run.summary).toContain('| ❌ fail | MUST | `health.without-token` |');
    expect(run.summary).toContain('| ✅ pass | MUST | `authz.whoami-any-tier` |');
    expect(run.summary).toContain('#### `health.without-token`');
    expect(run.summary).toContain(`curl -sS -i -X GET '${faulty.baseUrl}/v1/health'`);
    expect(run.summary).toMatch(
      /```sh\nnpx --no-install agent-gateway check --base-url '[^']+' --token-command /,
    );
    expect(run.outputs['exit-code']).toBe('1');
    // Tokens stay in the variables the commands read; the summary never carries them.
    expect(run.summary).not.toContain(faulty.token);
  }, 90_000);

  it('says the suite could not run (exit 2), with the reason, when the gateway is unreachable', async () => {
    const run = await runAction({
      'base-url': 'http://127.0.0.1:9',
      'token-command': 'printf %s some-token',
      'reports-dir': 'reports',
    });
    expect(run.code, run.log).toBe(2);
    expect(run.summary).toContain('## Agent Tool Gateway conformance: ⛔ could not run');
    expect(run.summary).toMatch(/agent-gateway: .*127\.0\.0\.1:9/);
    expect(run.outputs).toEqual({ 'exit-code': '2' });
    expect(existsSync(join(run.workspace, 'reports', 'conformance.json'))).toBe(false);
  }, 90_000);

  it('refuses missing or conflicting inputs (exit 2) and says which in the summary', async () => {
    const none = await runAction({ 'base-url': server.url });
    expect(none.code).toBe(2);
    expect(none.summary).toContain('Give token-command or api-key (a secret)');
    const both = await runAction({ 'base-url': server.url, 'api-key': 'k', 'token-command': 'echo t' });
    expect(both.code).toBe(2);
    expect(both.log).toContain('Give one of token-command, api-key or token, not token-command and api-key.');
    const noUrl = await runAction({ 'api-key': 'k' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.summary).toContain('The base-url input is required');
  }, 90_000);
});
