import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';
import { runCli, startServe } from './support/cli.ts';

const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

describe('agent-gateway CLI', () => {
  it('--help lists the commands and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/serve/);
    expect(result.stdout).toMatch(/token/);
  });

  it('token <agent> prints, as its last line, a token the default gateway accepts', async () => {
    const result = await runCli(['token', 'agent-early']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/agent-early/);
    const token = lastLine(result.stdout);
    const verified = createGateway().idp.verify(token);
    expect(verified).toMatchObject({ ok: true, identity: { agentId: 'agent-early', tier: 'early_access' } });
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

  it('AGENT_GATEWAY_SIGNING_SECRET changes the signing secret of minted tokens', async () => {
    const result = await runCli(['token', 'agent-early'], {
      env: { AGENT_GATEWAY_SIGNING_SECRET: 'another-secret-entirely' },
    });
    expect(createGateway().idp.verify(lastLine(result.stdout))).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const other = createGateway({ config: { identity: { signing_secret: 'another-secret-entirely' } } });
    expect(other.idp.verify(lastLine(result.stdout)).ok).toBe(true);
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

  it('serve refuses an unknown scenario and a short admin key with exit 2', async () => {
    const unknown = await runCli(['serve', '--scenario', 'no-such-scenario']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Invalid scenario no-such-scenario.*bundled: burst-429/s);
    const short = await runCli(['serve', '--admin-key', 'short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 8 characters/);
  });
});
