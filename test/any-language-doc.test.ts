import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';

/*
 * docs/any-language.md, held to what it says: its curl walk-through runs against a served gateway, its Python
 * example is the file the plugin's suite runs (python/tests/test_quickstart.py, `npm run test:python`), and
 * `serve` shows the fixture agents' API keys and a curl line that mints a token from any language.
 */

const root = new URL('..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const guide = read('docs/any-language.md');
const ADMIN_KEY = 'any-language-admin-key';
const run = promisify(execFile);
// A served gateway may take up to 120 s to start on a loaded machine and the shell up to 240 s: the tests that
// start one wait for those bounds rather than vitest's default 20 s.
const PROCESS_TEST_MS = 400_000;

const running: ServeProcess[] = [];
afterEach(() => Promise.all(running.splice(0).map((s) => s.stop())));

async function serve(args: string[]): Promise<ServeProcess> {
  const server = await spawnServe(args, { env: { AGENT_GATEWAY_ADMIN_KEY: ADMIN_KEY }, timeoutMs: 120_000 });
  running.push(server);
  return server;
}

const bash = (script: string, env: Record<string, string>) =>
  run('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: new URL('.', root),
    env: { ...process.env, ...env },
    timeout: 240_000,
  });

describe('docs/any-language.md', { timeout: PROCESS_TEST_MS }, () => {
  it('is linked from the README guide table', () => {
    expect(read('README.md')).toMatch(/^\| \[docs\/any-language\.md\]\(docs\/any-language\.md\) \|/m);
  });

  it('quotes python/tests/test_quickstart.py as it is (the plugin suite runs it)', () => {
    expect(guide).toContain(`\`\`\`python\n${read('python/tests/test_quickstart.py').trimEnd()}\n\`\`\``);
  });

  it("serve's startup text lists every fixture agent's API key and a curl line that mints a token", async () => {
    const server = await serve([]);
    const agents = (await (
      await fetch(`${server.url}/__admin/agents`, { headers: { 'x-admin-key': ADMIN_KEY } })
    ).json()) as { agents: { id: string; api_key: string }[] };
    expect(agents.agents.length).toBeGreaterThan(0);
    for (const agent of agents.agents)
      expect(server.output()).toMatch(new RegExp(`${agent.id} .*API key ${agent.api_key}`));
    const mint = server
      .output()
      .split('\n')
      .find((line) => line.includes('/idp/token') && line.trim().startsWith('curl'));
    expect(mint, server.output()).toBeDefined();
    const { stdout } = await bash(mint as string, {});
    const { token } = JSON.parse(stdout) as { token: string };
    const whoami = await fetch(`${server.url}/v1/whoami`, { headers: { 'X-Agent-Identity': token } });
    expect(whoami.status).toBe(200);
  });

  it('the curl-only walk-through runs as written and shows what the guide says', async () => {
    const block = /<!-- run by test\/any-language-doc\.test\.ts -->\n```bash\n([\s\S]*?)\n```/.exec(
      guide,
    )?.[1];
    expect(block).toBeDefined();
    // As the guide starts it: `serve --scenario burst-429` with the admin key in the environment.
    expect(guide).toContain('npx agent-gateway serve --scenario burst-429');
    const server = await serve(['--scenario', 'burst-429']);
    const { stdout } = await bash(block as string, { GW: server.url, AGENT_GATEWAY_ADMIN_KEY: ADMIN_KEY });
    expect(stdout).toContain('200 200 200 200 200 429 429');
    expect(stdout).toContain('503 200');
    expect(stdout).toContain('{"agent":{"id":"agent-early"');
    const report = JSON.parse(
      stdout.split('\n').find((line) => line.startsWith('{"schema_version"')) ?? '{}',
    );
    expect(report).toMatchObject({ schema_version: 1, agent: 'agent-early' });
    expect(report.violations.map((v: { rule: string }) => v.rule)).toContain('honor-retry-after');
    expect(stdout).toMatch(/FAIL {2}honor-retry-after +§7/);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('exit 1');
  });
});
