import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';
import { runCli, startServe } from './support/cli.ts';

const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';
// A developer's own AGENT_GATEWAY_SIGNING_SECRET must not change what these tests see.
const NO_SECRET = { AGENT_GATEWAY_SIGNING_SECRET: '' };

// Each test starts CLI processes (tsx compiles the sources at every start): on a loaded 2-core machine one
// start takes seconds, so a test that starts three of them needs more than the default 20 s. No timing is
// asserted; the timeout only bounds a hang.
describe('agent-gateway CLI', { timeout: 90_000 }, () => {
  it('--help lists the commands and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/serve/);
    expect(result.stdout).toMatch(/token/);
  });

  it('token <agent> without a signing secret asks the running gateway (the default URL), whose token works there', async () => {
    const server = await startServe([], NO_SECRET);
    try {
      expect(server.output()).toMatch(/token signing: a random secret of this process/);
      // AGENT_GATEWAY_BASE_URL stands for npm start's http://127.0.0.1:8787, which a test cannot rely on.
      const result = await runCli(['token', 'agent-early'], {
        env: { ...NO_SECRET, AGENT_GATEWAY_BASE_URL: server.url },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`agent-early: token from the gateway at ${server.url}`);
      const whoami = await fetch(`${server.url}/v1/whoami`, {
        headers: { 'X-Agent-Identity': lastLine(result.stdout) },
      });
      expect(await whoami.json()).toMatchObject({ agent: { id: 'agent-early' }, tier: 'early_access' });
      // Another process's random secret: a gateway created here refuses it.
      expect(createGateway().idp.verify(lastLine(result.stdout))).toEqual({
        ok: false,
        reason: 'bad_signature',
      });
    } finally {
      await server.stop();
    }
  });

  it('token without a signing secret and no gateway running says what to do, with exit 2', async () => {
    const result = await runCli(['token', 'agent-early'], {
      env: { ...NO_SECRET, AGENT_GATEWAY_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/No gateway answers at http:\/\/127\.0\.0\.1:9 .*start it \(`npm start`/);
    expect(result.stderr).toMatch(/--base-url/);
  });

  it('token refuses an unknown agent with exit 2 and lists the known ones', async () => {
    const result = await runCli(['token', 'agent-nobody']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No agent "agent-nobody".*agent-early/s);
    expect(result.stdout).toBe('');
  });

  it('a usage mistake exits 2 with the reason', async () => {
    const result = await runCli(['serve', '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port.*must be an integer/);
  });

  it('serve refuses a bad config at start, naming the file, the path and the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-config-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'default_tier: gold\n');
    const result = await runCli(['serve', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/default_tier: unknown tier "gold"/);
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('serve says so when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runCli(['serve', '--port', String(port)]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`Port ${port} .* is in use`));
    } finally {
      blocker.close();
    }
  });

  it('serve runs the gateway; token --base-url mints from its identity provider; SIGTERM stops it', async () => {
    const server = await startServe();
    try {
      expect(server.output()).toMatch(/agent-verified\s+tier verified/);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
      const minted = await runCli(['token', 'agent-verified', '--base-url', server.url]);
      expect(minted.code).toBe(0);
      const whoami = await fetch(`${server.url}/v1/whoami`, {
        headers: { 'X-Agent-Identity': lastLine(minted.stdout) },
      });
      expect(await whoami.json()).toMatchObject({ agent: { id: 'agent-verified' }, tier: 'verified' });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('token --base-url reports an unreachable gateway with exit 2', async () => {
    const result = await runCli(['token', 'agent-early', '--base-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Cannot reach the identity provider/);
  });

  it('with AGENT_GATEWAY_SIGNING_SECRET, token mints here: valid for gateways with that secret, no other', async () => {
    const secret = 'a-private-secret-of-32-characters-or-more';
    const result = await runCli(['token', 'agent-early'], { env: { AGENT_GATEWAY_SIGNING_SECRET: secret } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/valid for any gateway using this config's signing secret/);
    expect(result.stderr).not.toMatch(/WARNING/);
    expect(createGateway().idp.verify(lastLine(result.stdout))).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const other = createGateway({ config: { identity: { signing_secret: secret } } });
    expect(other.idp.verify(lastLine(result.stdout)).ok).toBe(true);
    const short = await runCli(['token', 'agent-early'], {
      env: { AGENT_GATEWAY_SIGNING_SECRET: 'sixteen-chars-ok' },
    });
    expect(short.code).toBe(0);
    expect(short.stderr).toMatch(/WARNING: the identity token signing secret is shorter than 32 characters/);
  });

  it('serve warns loudly about a public secret and refuses it on a host others can reach (before binding)', async () => {
    const PUBLIC = { AGENT_GATEWAY_SIGNING_SECRET: 'dev-only-signing-secret-change-me' };
    // Refused before it listens: nothing is ever bound to 0.0.0.0.
    const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { env: PUBLIC });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 with a public identity signing secret/);
    expect(refused.stderr).toMatch(/--allow-public-secret/);
    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/--allow-public-secret/);
    expect(help.stdout).toMatch(/AGENT_GATEWAY_ADMIN_KEY[\s\S]*visible[\s\S]*ps/);
    const server = await startServe([], PUBLIC);
    try {
      expect(server.output()).toMatch(/WARNING: the identity token signing secret is public/);
      expect(server.output()).toMatch(/token signing: the configured secret/);
    } finally {
      await server.stop();
    }
  });

  it('serve --scenario --admin-key: the scenario is in force and the admin API answers with the key', async () => {
    const server = await startServe(['--scenario', 'burst-429', '--admin-key', 'cli-admin-key']);
    try {
      expect(server.output()).toMatch(/scenario: burst-429/);
      expect(server.output()).toMatch(/tool-calls: 5 per 10 s, fixed_window/);
      const admin = await fetch(`${server.url}/__admin/scenario`, {
        headers: { 'x-admin-key': 'cli-admin-key' },
      });
      expect(await admin.json()).toMatchObject({ scenario: { name: 'burst-429' } });
      expect((await fetch(`${server.url}/__admin/scenario`)).status).toBe(401);
    } finally {
      await server.stop();
    }
  });

  it('serve reads the admin key from AGENT_GATEWAY_ADMIN_KEY, and --help says why (ps shows arguments)', async () => {
    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/AGENT_GATEWAY_ADMIN_KEY/);
    expect(help.stdout).toMatch(/visible\s+to\s+every\s+user\s+of\s+the\s+machine\s+in\s+`ps`/);
    const server = await startServe([], { AGENT_GATEWAY_ADMIN_KEY: 'env-admin-key' });
    try {
      expect(server.output()).toMatch(/admin API: .*\/__admin \(send X-Admin-Key\)/);
      const admin = await fetch(`${server.url}/__admin/scenario`, {
        headers: { 'x-admin-key': 'env-admin-key' },
      });
      expect(admin.status).toBe(200);
      expect((await fetch(`${server.url}/__admin/scenario`)).status).toBe(401);
    } finally {
      await server.stop();
    }
  });

  it('serve refuses an unknown scenario and a short admin key with exit 2', async () => {
    const unknown = await runCli(['serve', '--scenario', 'no-such-scenario']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Invalid scenario no-such-scenario.*bundled: burst-429/s);
    const short = await runCli(['serve', '--admin-key', 'short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 8 characters/);
  });
});
