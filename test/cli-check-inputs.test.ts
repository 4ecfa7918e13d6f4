import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayWithoutFetch, WITHOUT_FETCH_DOCUMENT } from './gateways/openapi-gateways.ts';
import type { RunningTarget } from './gateways/proof-target.ts';
import { statefulReference } from './gateways/proof-target.ts';
import { SNAPSHOT_BODY, SNAPSHOT_PATH, snapshotGateway } from './gateways/write-like-gateways.ts';
import { runCli } from './support/cli.ts';

/*
 * `agent-gateway check` through the real CLI: green means seen (a MUST check that could not run exits 2
 * naming the option that enables it, unless an expected-results file lists it; a stale line fails the run),
 * expired and revoked tokens as options of their own, and write-like tools declared with a body from a file.
 */
const dir = mkdtempSync(join(tmpdir(), 'cli-check-inputs-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const OPTIONAL =
  'auth.expired-token,auth.revoked-token,authz.whoami-tier,authz.access-denied,health.without-token';

describe('check: a MUST check that could not run', () => {
  let target: RunningTarget;
  beforeAll(async () => {
    target = await statefulReference()();
  });
  afterAll(() => target.close());

  it('with only a token exits 2, naming for each check the option that enables it', async () => {
    const result = await runCli([
      'check',
      '--base-url',
      target.baseUrl,
      '--token',
      target.token,
      '--only',
      OPTIONAL,
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    for (const [id, option] of [
      ['auth.expired-token', '--expired-token'],
      ['auth.revoked-token', '--revoked-token'],
      ['authz.whoami-tier', '--tier'],
      ['authz.access-denied', '--denied-token'],
    ] as const)
      expect(result.stderr).toMatch(
        new RegExp(`${id.replace('.', '\\.')} \\(MUST\\) was not observed \\(skipped\\): give ${option}`),
      );
    expect(result.stdout).toMatch(/PASS +MUST +health\.without-token/);
  }, 60_000);

  it('given the expired and revoked tokens (each its own option) and the tiers, runs and passes them (exit 0)', async () => {
    const json = join(dir, 'all.json');
    const result = await runCli(
      [
        'check',
        '--base-url',
        target.baseUrl,
        '--token',
        target.token,
        '--denied-token',
        target.deniedToken,
        '--expired-token',
        target.expiredToken as string,
        '--revoked-token-command',
        `printf %s "$REVOKED"`,
        '--tier',
        'verified',
        '--only',
        OPTIONAL,
        '--report-json',
        json,
      ],
      { env: { REVOKED: target.revokedToken as string } },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report.checks.map((c: { verdict: string }) => c.verdict)).toEqual(Array(5).fill('pass'));
  }, 60_000);

  it('listed in an --expected-results file, the skips exit 0; a line that no longer happens is stale (exit 1)', async () => {
    const expected = file(
      'expected.yaml',
      '# the CI identity provider gives no expired or revoked token\nauth.expired-token: skipped\nauth.revoked-token: skipped\nauthz.whoami-tier: skipped\nauthz.access-denied: skipped\n',
    );
    const base = ['check', '--base-url', target.baseUrl, '--token', target.token, '--only', OPTIONAL];
    const listed = await runCli([...base, '--expected-results', expected]);
    expect(listed.code, listed.stdout + listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/auth\.expired-token \(MUST\) \[expected \(--expected-results\)\]/);
    // The expired token given now: its line no longer happens, so the file is stale and the run fails.
    const stale = await runCli([
      ...base,
      '--expected-results',
      expected,
      '--expired-token',
      target.expiredToken as string,
    ]);
    expect(stale.code, stale.stdout + stale.stderr).toBe(1);
    expect(stale.stderr).toMatch(
      /stale expectation: auth\.expired-token was expected to be skipped \(--expected-results\) and is pass now/,
    );
    // An expected failure that happens is not counted; one of an unknown check, or a bad verdict, is exit 2.
    const unknown = await runCli([...base, '--expected-results', file('bad.yaml', 'auth.nope: fail\n')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/expected-results file .*bad\.yaml: unknown check id auth\.nope/);
    const verdict = await runCli([
      ...base,
      '--expected-results',
      file('verdict.yaml', 'auth.expired-token: maybe\n'),
    ]);
    expect(verdict.code).toBe(2);
    expect(verdict.stderr).toMatch(/auth\.expired-token: must be one of fail, skipped, inconclusive/);
  }, 90_000);
});

describe('check: a write-like tool, its body from a file', () => {
  let target: RunningTarget;
  beforeAll(async () => {
    target = await snapshotGateway()();
  });
  afterAll(() => target.close());
  const only = 'retry.sequential,retry.concurrent,auth.header-name-case-insensitive';

  it('declared NAME:write-like=PATH=@FILE passes the retry checks; undeclared, fails them pointing to the declaration', async () => {
    const body = file('snapshot.json', `${SNAPSHOT_BODY}\n`);
    const args = (tool: string, on: RunningTarget = target) => [
      'check',
      '--base-url',
      on.baseUrl,
      '--token',
      on.token,
      '--tool',
      'web.search',
      '--tool',
      tool,
      '--only',
      only,
      '--num-runs',
      '4',
    ];
    const declared = await runCli(args(`web.snapshot:write-like=${SNAPSHOT_PATH}=@${body}`));
    expect(declared.code, declared.stdout + declared.stderr).toBe(0);
    expect(declared.stdout).toContain('Tools: web.search, web.snapshot (write-like) (--tool)');
    // A fresh gateway: the declared run's snapshots are not the undeclared run's repeats.
    const fresh = await snapshotGateway()();
    try {
      const plain = await runCli(args(`web.snapshot=${SNAPSHOT_PATH}=@${body}`, fresh));
      expect(plain.code, plain.stdout + plain.stderr).toBe(1);
      expect(plain.stdout).toMatch(/FAIL +MUST +retry\.sequential/);
      expect(plain.stdout).toContain('--tool web.snapshot:write-like=/v1/web/snapshot');
      expect(plain.stdout).not.toContain('make whoami, search and fetch safe');
    } finally {
      await fresh.close();
    }
    const missing = await runCli(args(`web.snapshot=${SNAPSHOT_PATH}=@${join(dir, 'none.json')}`));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/the body of web\.snapshot cannot be read from .*none\.json: ENOENT/);
  }, 90_000);
});

describe('check --openapi: the tools from the gateway’s OpenAPI document', () => {
  it('a gateway with an extra tool and without web.fetch: checks search and extract, names the missing fetch (exit 0)', async () => {
    const target = await gatewayWithoutFetch();
    try {
      const json = join(dir, 'openapi.json');
      const base = [
        'check',
        '--base-url',
        target.baseUrl,
        '--token',
        target.token,
        '--denied-token',
        target.deniedToken,
      ];
      const only = [
        '--only',
        'authz.allowed-calls-served,auth.missing-token,errors.malformed-body',
        '--num-runs',
        '4',
      ];
      const result = await runCli([
        ...base,
        '--openapi',
        file('gateway.yaml', WITHOUT_FETCH_DOCUMENT),
        ...only,
        '--report-json',
        json,
      ]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stderr).toMatch(
        /does not describe POST \/v1\/web\/fetch \(web\.fetch\): web\.fetch not checked \(the suite never requires a tool a gateway does not declare\)/,
      );
      expect(result.stderr).toContain('Tools from the OpenAPI document: web.search, web.extract');
      const report = JSON.parse(readFileSync(json, 'utf8'));
      expect(report.tools).toEqual([
        { name: 'web.search', path: '/v1/web/search', write_like: false },
        { name: 'web.extract', path: '/v1/web/extract', write_like: false },
      ]);
      // The control: told nothing, the suite checks the spec's two and fails on the missing web.fetch.
      const control = await runCli([...base, ...only]);
      expect(control.code, control.stdout + control.stderr).toBe(1);
      expect(control.stdout).toMatch(/POST \/v1\/web\/fetch/);
    } finally {
      await target.close();
    }
  }, 90_000);

  it('reads a URL: the reference gateway’s own document marks a config’s write-like tool, and its retries pass', async () => {
    const target = await snapshotGateway()();
    try {
      const json = join(dir, 'snapshot.json');
      const result = await runCli([
        'check',
        '--base-url',
        target.baseUrl,
        '--token',
        target.token,
        '--openapi',
        `${target.baseUrl}/openapi.json`,
        '--only',
        'retry.sequential,retry.concurrent,auth.header-name-case-insensitive',
        '--num-runs',
        '4',
        '--report-json',
        json,
      ]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stderr).toContain(
        'Tools from the OpenAPI document: web.search, web.fetch, web.snapshot (write-like)',
      );
      const report = JSON.parse(readFileSync(json, 'utf8'));
      expect(report.tools).toContainEqual({
        name: 'web.snapshot',
        path: '/v1/web/snapshot',
        write_like: true,
      });
      const bad = await runCli([
        'check',
        '--base-url',
        target.baseUrl,
        '--token',
        target.token,
        '--openapi',
        join(dir, 'absent.yaml'),
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/cannot read the OpenAPI document .*absent\.yaml: ENOENT/);
    } finally {
      await target.close();
    }
  }, 90_000);
});
