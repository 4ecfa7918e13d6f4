import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildImage, freePort, IMAGE, PODMAN, podman, ROOT, waitForHealth } from './support/podman.ts';
import { describeNeeding } from './support/system-binary.ts';

/*
 * The container image (Dockerfile), built with podman on a Debian base made here (no registry on this
 * machine) and run as a user would: serve with a published port, health, a token, a search, the client
 * report, `check` from outside and from the image itself, and the proxy in front of it.
 */

const ADMIN_KEY = `image-${randomBytes(8).toString('hex')}`;
const NAME = `agent-gateway-image-test-${process.pid}`;
const PROXY_NAME = `${NAME}-proxy`;
const CLI = join(ROOT, 'cli/agent-gateway.mjs');
let gateway = '';
let proxy = '';
let data = '';

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
}

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** An agent's API key as serve's startup text lists it (the container's logs). */
function apiKeyOf(agent: string): string {
  const found = new RegExp(`${agent}\\s+tier \\S+\\s+API key (\\S+)`).exec(podman(['logs', NAME]));
  if (!found?.[1]) throw new Error(`no API key of ${agent} in serve's output`);
  return found[1];
}

describeNeeding(PODMAN, 'container image', 'the container image, built and run with podman', () => {
  beforeAll(async () => {
    buildImage();
    const [servePort, proxyPort] = [await freePort(), await freePort()];
    gateway = `http://127.0.0.1:${servePort}`;
    // A config from a mounted volume (the image's working directory is /data).
    data = mkdtempSync(join(tmpdir(), 'agent-gateway-image-'));
    chmodSync(data, 0o755); // read by the image's user (uid 1000)
    writeFileSync(join(data, 'gateway.yaml'), 'identity:\n  token_ttl_seconds: 1234\n');
    proxy = `http://127.0.0.1:${proxyPort}`;
    // The proxy joins this container's network namespace, so both ports are published here.
    podman([
      'run',
      '-d',
      '--rm',
      '--name',
      NAME,
      '-p',
      `127.0.0.1:${servePort}:8787`,
      '-p',
      `127.0.0.1:${proxyPort}:8788`,
      '-e',
      `AGENT_GATEWAY_ADMIN_KEY=${ADMIN_KEY}`,
      '-v',
      `${data}:/data:ro`,
      IMAGE,
      'serve',
      '--config',
      'gateway.yaml',
    ]);
    await waitForHealth(`${gateway}/v1/health`, NAME);
  }, 900_000);

  afterAll(() => {
    for (const name of [PROXY_NAME, NAME])
      spawnSync(PODMAN.path, ['--runtime', 'runc', 'rm', '-f', '-t', '0', name], { stdio: 'ignore' });
    if (data) rmSync(data, { recursive: true, force: true });
  });

  it('runs as a non-root user, with the CLI as its entry point and a health check on /v1/health', () => {
    const [config] = JSON.parse(podman(['image', 'inspect', IMAGE])) as {
      Config: { User: string; Entrypoint: string[] };
      Healthcheck: { Test: string[] };
    }[];
    expect(config?.Config.User).toBe('node');
    expect(config?.Config.Entrypoint.join(' ')).toContain('agent-gateway.mjs');
    expect(config?.Healthcheck.Test.join(' ')).toContain('/v1/health');
    expect(podman(['exec', NAME, 'id', '-u']).trim()).not.toBe('0');
    // The health check itself, run now (it exits 0 only on a 200 from /v1/health inside the container).
    expect(podman(['healthcheck', 'run', NAME]).trim()).toMatch(/healthy|^$/);
  });

  it('serves health, a token and a search from the published port, and grades the agent', async () => {
    expect((await json(`${gateway}/v1/health`)).status).toBe(200);
    const minted = await json(`${gateway}/idp/token`, post({ api_key: apiKeyOf('agent-verified') }));
    expect(minted.status).toBe(200);
    expect(minted.body.expires_in).toBe(1234); // the mounted config's token lifetime
    const token = String(minted.body.token);
    const search = await json(
      `${gateway}/v1/web/search`,
      post({ query: 'agent tool gateway' }, { 'X-Agent-Identity': token }),
    );
    expect(search.status).toBe(200);
    const report = await json(`${gateway}/__admin/report?agent=agent-verified`, {
      headers: { 'X-Admin-Key': ADMIN_KEY },
    });
    expect(report.status).toBe(200);
    expect(report.body.requests).toBeGreaterThan(0);
    expect(report.body.violations).toEqual([]);
  });

  it('passes `check` run from outside against the gateway in the container', async () => {
    // The stateful inputs, through the admin API: a token revoked before its expiry (agent-early's tokens
    // revoked; the denied token is minted after), and one past its lifetime (the clock moved past the
    // mounted config's 1234 s; the valid tokens are minted after).
    const admin = { 'X-Admin-Key': ADMIN_KEY };
    const revoked = String(
      (await json(`${gateway}/idp/token`, post({ api_key: apiKeyOf('agent-early') }))).body.token,
    );
    expect(
      (await fetch(`${gateway}/__admin/agents/agent-early/revoke-tokens`, { method: 'POST', headers: admin }))
        .status,
    ).toBe(200);
    const expired = String(
      (await json(`${gateway}/idp/token`, post({ api_key: apiKeyOf('agent-verified') }))).body.token,
    );
    expect((await json(`${gateway}/__admin/clock/advance`, post({ seconds: 1300 }, admin))).status).toBe(200);
    const run = cli([
      'check',
      '--base-url',
      gateway,
      '--expired-token',
      expired,
      '--revoked-token',
      revoked,
      '--tier',
      'verified',
      '--denied-tier',
      'early_access',
      '--token-command',
      `${process.execPath} ${CLI} token agent-verified --base-url ${gateway}`,
      '--denied-token-command',
      `${process.execPath} ${CLI} token agent-early --base-url ${gateway}`,
      '--num-runs',
      '3',
    ]);
    expect(run.stdout + run.stderr).toMatch(/health\.without-token/);
    expect(run.status, run.stdout + run.stderr).toBe(0);
  }, 600_000);

  it('runs `check` from the image itself (IMAGE check --base-url ...)', () => {
    // In the gateway container's network namespace; the token minted by the image's own CLI.
    const mint =
      'node /opt/agent-gateway/cli/agent-gateway.mjs token agent-verified --base-url http://127.0.0.1:8787';
    // The report written to a mounted folder (the working directory /data), writable by the image's user.
    const reports = mkdtempSync(join(tmpdir(), 'agent-gateway-image-reports-'));
    chmodSync(reports, 0o777);
    const out = podman(
      [
        'run',
        '--rm',
        '--network',
        `container:${NAME}`,
        '-v',
        `${reports}:/data`,
        IMAGE,
        'check',
        '--report-junit',
        'conformance.xml',
        '--base-url',
        'http://127.0.0.1:8787',
        '--token-command',
        mint,
        '--only',
        'health.without-token,auth.missing-token',
        '--num-runs',
        '3',
      ],
      { timeoutMs: 300_000 },
    );
    expect(out).toMatch(/PASS\s+MUST\s+health\.without-token/);
    expect(out).toMatch(/PASS\s+MUST\s+auth\.missing-token/);
    expect(readFileSync(join(reports, 'conformance.xml'), 'utf8')).toContain('health.without-token');
    rmSync(reports, { recursive: true, force: true });
  }, 300_000);

  it('runs the proxy (IMAGE proxy --target ...) and grades an agent through it', async () => {
    podman([
      'run',
      '-d',
      '--rm',
      '--name',
      PROXY_NAME,
      '--network',
      `container:${NAME}`,
      '-e',
      `AGENT_GATEWAY_ADMIN_KEY=${ADMIN_KEY}`,
      IMAGE,
      'proxy',
      '--target',
      'http://127.0.0.1:8787',
    ]);
    await waitForHealth(`${proxy}/v1/health`, PROXY_NAME);
    const minted = await json(`${proxy}/idp/token`, post({ api_key: apiKeyOf('agent-early') }));
    expect(minted.status).toBe(200);
    const page = await json(
      `${proxy}/v1/web/fetch`,
      post(
        { url: 'https://docs.agent-gateway.example/welcome' },
        { 'X-Agent-Identity': String(minted.body.token) },
      ),
    );
    expect(page.status).toBe(200);
    const report = await json(`${proxy}/__admin/report?agent=agent-early`, {
      headers: { 'X-Admin-Key': ADMIN_KEY },
    });
    expect(report.status).toBe(200);
    expect(report.body.requests).toBeGreaterThan(0);
    expect(report.body.violations).toEqual([]);
  }, 300_000);
});

// The recipes for tests in other stacks, in this file so that the image is built by one file at a time.
import './container-recipes.ts';
