import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import type { RunningTarget } from './gateways/proof-target.ts';
import { VALID_VARIANTS } from './gateways/valid-variants.ts';
import { runCli } from './support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'cli-check-'));
const faulty = (id: string) => {
  const target = FAULTY_GATEWAYS.find((g) => g.id === id);
  if (!target) throw new Error(`no faulty gateway ${id}`);
  return target.start();
};
/** `agent-gateway check --base-url <baseUrl> ...args`. */
const runCheck = (baseUrl: string, args: string[], options?: Parameters<typeof runCli>[1]) =>
  runCli(['check', '--base-url', baseUrl, ...args], options);
/** A loopback port nothing listens on. */
const UNREACHABLE = 'http://127.0.0.1:9';
const tokenArgs = (t: RunningTarget) => [
  '--base-url',
  t.baseUrl,
  '--token',
  t.token,
  '--denied-token',
  t.deniedToken,
];

describe('agent-gateway check against the reference gateway', () => {
  let target: RunningTarget;
  beforeAll(async () => {
    target = await (VALID_VARIANTS.find((v) => v.id === 'reference')?.start() as Promise<RunningTarget>);
  });
  afterAll(() => target.close());

  it('--token-command wins over an exported AGENT_GATEWAY_TOKEN; the banner names what a missing denied token skips', async () => {
    const result = await runCheck(
      target.baseUrl,
      [
        '--token-command',
        `printf %s ${target.token}`,
        '--only',
        'authz.whoami-any-tier,authz.access-denied',
        '--num-runs',
        '2',
      ],
      { env: { AGENT_GATEWAY_TOKEN: 'stale-token-from-the-environment', AGENT_GATEWAY_DENIED_TOKEN: '' } },
    );
    // authz.access-denied is a MUST check it could not run: exit 2, naming the option that enables it.
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stdout).toMatch(/no denied token \(--denied-token\): authz\.access-denied will be skipped/);
    expect(result.stderr).toMatch(
      /authz\.access-denied \(MUST\) was not observed \(skipped\): give --denied-token/,
    );
    expect(result.stdout).toMatch(/PASS +MUST +authz\.whoami-any-tier/);
  });

  it('exits 0 when every check passes (the optional stateful ones given), and writes the JSON and JUnit reports', async () => {
    const json = join(dir, 'reports', 'conformance.json');
    const junit = join(dir, 'reports', 'conformance.xml');
    const stateful = await (VALID_VARIANTS.find(
      (v) => v.id === 'stateful-inputs',
    )?.start() as Promise<RunningTarget>);
    const result = await runCli([
      'check',
      ...tokenArgs(stateful),
      '--expired-token',
      stateful.expiredToken ?? '',
      '--revoked-token',
      stateful.revokedToken ?? '',
      '--tier',
      stateful.tier ?? '',
      '--denied-tier',
      stateful.deniedTier ?? '',
      '--num-runs',
      '5',
      '--seed',
      '7',
      '--report-json',
      json,
      '--report-junit',
      junit,
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`${CHECKS.length} checks: ${CHECKS.length} pass`));
    expect(result.stdout).toMatch(/seed 7/);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report.checks).toHaveLength(CHECKS.length);
    expect(Object.keys(report.checks[0]).sort()).toEqual(
      [
        'blocking',
        'duration_ms',
        'enabled_by',
        'id',
        'level',
        'message',
        'remedy',
        'reproduction',
        'requests',
        'shared_with',
        'spec_ref',
        'title',
        'unobserved',
        'verdict',
      ].sort(),
    );
    expect(report.summary).toMatchObject({
      pass: CHECKS.length,
      fail: 0,
      not_served: 0,
      inconclusive_by: {},
      exit_code: 0,
    });
    const xml = readFileSync(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(CHECKS.length);
    expect(xml).toContain('<property name="spec_ref" value="§5 rule 3, §7"/>');
    expect(xml).toContain('<property name="level" value="SHOULD"/>');
    expect(xml).not.toContain(stateful.token);
    expect(xml).not.toContain(stateful.expiredToken);
    await stateful.close();
  }, 90_000);

  it('token commands work, and a failing token command means exit 2', async () => {
    const ok = await runCheck(target.baseUrl, [
      '--token-command',
      `echo ${target.token}`,
      '--only',
      'auth.header-name-case-insensitive',
    ]);
    expect(ok.code).toBe(0);
    const broken = await runCheck(target.baseUrl, ['--token-command', 'echo nope >&2; exit 3']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/token command exited with 3/);
  });

  it('a token the gateway refuses is a wrong input to the run (exit 2), not a failing gateway', async () => {
    for (const flag of ['--token', '--denied-token']) {
      const args = ['check', ...tokenArgs(target)];
      args[args.indexOf(flag) + 1] = 'not-a-real-token-xxxxxxxxxxxxxxxxxxx';
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /the gateway does not accept the token in \$(TOKEN|DENIED_TOKEN): GET \/v1\/whoami answered 401 invalid_identity_token/,
      );
    }
  });

  it('--token must be allowed both tools: a fetch-only token fails authz.allowed-calls-served, unless --allowed-tools says so (then search is skipped, not passed)', async () => {
    // agent-early may call web.fetch only; agent-none may call no tool (the denied token, on web.fetch).
    // Minted by the target's own identity provider: each gateway process signs with a random secret.
    const mint = async (agent: string) =>
      (await runCli(['token', agent, '--base-url', target.baseUrl])).stdout
        .trim()
        .split('\n')
        .at(-1) as string;
    const earlyToken = await mint('agent-early');
    const noneToken = await mint('agent-none');
    const args = [
      'check',
      '--base-url',
      target.baseUrl,
      '--token',
      earlyToken,
      '--denied-token',
      noneToken,
      '--denied-tool',
      'web.fetch',
      '--only',
      'authz.allowed-calls-served,authz.access-denied,errors.malformed-body',
      '--num-runs',
      '4',
    ];
    const unnarrowed = await runCli(args);
    expect(unnarrowed.code, unnarrowed.stdout + unnarrowed.stderr).toBe(1);
    expect(unnarrowed.stdout).toMatch(/FAIL +MUST +authz\.allowed-calls-served/);
    expect(unnarrowed.stdout).toMatch(/Expected 2xx for POST \/v1\/web\/search with the valid token/);
    expect(unnarrowed.stdout).toMatch(/--allowed-tools web\.fetch/);
    const narrowed = await runCli([...args, '--allowed-tools', 'web.fetch']);
    expect(narrowed.code, narrowed.stdout + narrowed.stderr).toBe(0);
    expect(narrowed.stdout).toMatch(
      /--allowed-tools web\.fetch: web\.search not called with \$TOKEN \(skipped, not passed\)/,
    );
    const check = (id: string) => new RegExp(`PASS +MUST +${id.replace('.', '\\.')}`);
    expect(narrowed.stdout).toMatch(check('authz.allowed-calls-served'));
    expect(narrowed.stdout).toMatch(check('errors.malformed-body'));
    const bad = await runCli([...args, '--allowed-tools', 'web.browse']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /unknown tool web\.browse in the allowed tools; the tools checked: web\.search, web\.fetch/,
    );
  }, 60_000);

  it('nothing executed is exit 2: a run whose only check was skipped', async () => {
    const result = await runCheck(target.baseUrl, ['--token', target.token, '--only', 'authz.access-denied']);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/SKIP .*authz\.access-denied/);
    expect(result.stdout).toMatch(/needs --denied-token or --denied-token-command/);
  });
});

describe('agent-gateway check exit codes and reproductions', () => {
  it('exit 2 when the target is unreachable, an id is unknown, or no token is given', async () => {
    const unreachable = await runCheck(UNREACHABLE, ['--token', 't']);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/cannot reach the gateway at http:\/\/127\.0\.0\.1:9/);
    const unknown = await runCheck(UNREACHABLE, ['--token', 't', '--only', 'auth.nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown check id auth\.nope; known ids: health\.without-token/);
    const noToken = await runCheck(UNREACHABLE, [], {
      env: { AGENT_GATEWAY_TOKEN: '' },
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/Give --token or --token-command/);
    const badSeed = await runCheck(UNREACHABLE, ['--token', 't'], {
      env: { AGENT_GATEWAY_SEED: 'twelve' },
    });
    expect(badSeed.code).toBe(2);
    expect(badSeed.stderr).toMatch(
      /AGENT_GATEWAY_SEED must be an integer from 0 to 2147483647, got "twelve"/,
    );
  });

  it('exit 1 on a failed MUST check, with the curl reproduction; the replay command reproduces the shrunk case', async () => {
    const target = await faulty('long-token-crash');
    try {
      const args = ['check', ...tokenArgs(target), '--only', 'auth.invalid-token', '--seed', '11'];
      const result = await runCli([...args, '--num-runs', '20']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/FAIL +MUST +auth\.invalid-token/);
      expect(result.stdout).toMatch(/reproduce: curl -sS -i -X (GET|POST) /);
      const replay = /replay: (npx --no-install agent-gateway check .*)/.exec(result.stdout)?.[1] ?? '';
      const path = /--path '([^']+)'/.exec(replay)?.[1] ?? '';
      expect(path).toMatch(/^(long|oversized)@(whoami|web\.search|web\.fetch):/);
      const again = await runCli([...args, '--path', path]);
      expect(again.code).toBe(1);
      const counterexample = (text: string) => /counterexample: (.*)/.exec(text)?.[1];
      expect(counterexample(again.stdout)).toBe(counterexample(result.stdout));
    } finally {
      await target.close();
    }
  }, 60_000);

  it('a gateway that serves nothing is exit 1, named, and the summary says the calls were never served', async () => {
    const target = await faulty('serves-nothing-429');
    const json = join(dir, 'serves-nothing.json');
    try {
      const result = await runCli([
        'check',
        ...tokenArgs(target),
        '--only',
        'health.without-token,authz.allowed-calls-served,auth.missing-token',
        '--num-runs',
        '3',
        '--report-json',
        json,
      ]);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toMatch(
        /FAIL +MUST +authz\.allowed-calls-served .*\n +\(never served\) Expected 2xx/,
      );
      expect(result.stdout).toMatch(
        /3 checks: 0 pass, 3 fail \(3 MUST, 0 SHOULD; 3 because the gateway never served the calls\)/,
      );
      const report = JSON.parse(readFileSync(json, 'utf8'));
      expect(report.checks.map((c: { unobserved: string }) => c.unobserved)).toEqual([
        'not-served',
        'not-served',
        'not-served',
      ]);
    } finally {
      await target.close();
    }
  }, 60_000);

  it('a failed SHOULD check is exit 0, and exit 1 with --strict', async () => {
    const target = await faulty('health-rejects-bad-token');
    try {
      const args = [
        'check',
        ...tokenArgs(target),
        '--only',
        'health.ignores-bad-token,health.without-token',
        '--num-runs',
        '5',
      ];
      expect((await runCli(args)).code).toBe(0);
      expect((await runCli([...args, '--strict'])).code).toBe(1);
    } finally {
      await target.close();
    }
  }, 60_000);

  it('--list prints every check with its level and spec section', async () => {
    const result = await runCli(['check', '--list']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(CHECKS.length);
    expect(result.stdout).toMatch(/ratelimit\.retry-after-honoured +SHOULD +§7/);
  }, 60_000);
});
