import { describe, expect, it } from 'vitest';
import { toJsonReport } from '../conformance/reporters/json.ts';
import { exitCodeFor, runConformance } from '../conformance/run/runner.ts';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';
import { jsonError, PROOF_CONFIG } from './gateways/proof-target.ts';
import { PROOF_RUNS, PROOF_SEED } from './support/proof.ts';

/*
 * The suite checks the tools it is told of and never requires one a gateway does not declare. The gateway
 * here has no web.fetch (its path is an unknown one, 404) and a tool of its own, web.extract, declared in
 * its config. Told its catalogue (--tool web.search --tool web.extract=...), the suite passes it and calls
 * the extra tool; not told (the spec's two by default), it fails it on web.fetch: the control that shows
 * the declaration is what keeps the run free of a false failure.
 */

/** The reference gateway with web.extract, and web.fetch answered as a path it does not serve. */
async function gatewayWithoutFetch() {
  const gateway = createGateway({
    config: {
      ...PROOF_CONFIG,
      tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } },
    },
    log: () => {},
  });
  const server = await serve(
    {
      fetch: (request: Request) =>
        new URL(request.url).pathname === '/v1/web/fetch'
          ? Promise.resolve(jsonError(404, 'not_found'))
          : gateway.fetch(request),
    },
    { port: 0, log: () => {} },
  );
  return { gateway, server };
}

async function runAgainst(tools?: string[]) {
  const { gateway, server } = await gatewayWithoutFetch();
  try {
    const report = await runConformance({
      baseUrl: server.url,
      token: gateway.mintToken('agent-verified'),
      deniedToken: gateway.mintToken('agent-early'),
      seed: PROOF_SEED,
      numRuns: PROOF_RUNS,
      ...(tools && { tools }),
    });
    return { report, gateway };
  } finally {
    await server.close();
  }
}

const calls = (gateway: Gateway, operation: string) =>
  gateway.journal.list({}).filter((entry) => entry.operation === operation);

describe('the suite checks the tools it is told of', () => {
  it('passes a gateway without web.fetch, told its tools, and calls only those', async () => {
    const { report, gateway } = await runAgainst([
      'web.search',
      'web.extract=/v1/web/extract={"url":"https://example.com/"}',
    ]);
    const failing = report.checks.filter((c) => c.verdict === 'fail');
    expect(failing.map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    // The optional checks it gave no input for are unobserved MUST checks: exit 2 unless listed as expected.
    expect(exitCodeFor(report, true)).toBe(2);
    const optional = {
      'auth.expired-token': 'skipped',
      'auth.revoked-token': 'skipped',
      'authz.whoami-tier': 'skipped',
    } as const;
    expect(exitCodeFor({ ...report, expectedResults: optional }, true)).toBe(0);
    expect(toJsonReport(report, 0).tools).toEqual([
      { name: 'web.search', path: '/v1/web/search', write_like: false },
      { name: 'web.extract', path: '/v1/web/extract', write_like: false },
    ]);
    // The extra tool was checked: refused without a token, served with it, with the body given.
    const extract = calls(gateway, 'web.extract');
    expect(extract.some((e) => e.status === 401)).toBe(true);
    expect(extract.some((e) => e.status === 200)).toBe(true);
    // web.fetch was never asked for: its path was not one of the tools.
    expect(gateway.journal.list({}).filter((e) => e.path === '/v1/web/fetch')).toEqual([]);
  }, 60_000);

  it('by default checks the spec’s two, so the same gateway fails on web.fetch (the control)', async () => {
    const { report } = await runAgainst();
    const failing = report.checks.filter((c) => c.verdict === 'fail');
    expect(failing.length).toBeGreaterThan(0);
    expect(failing.map((c) => c.message).join('\n')).toContain('/v1/web/fetch');
    expect(report.tools.map((t) => t.name)).toEqual(['web.search', 'web.fetch']);
  }, 60_000);

  it('refuses, before any check, a tool role outside the tools told of (exit 2)', async () => {
    await expect(
      runConformance({ baseUrl: 'http://127.0.0.1:1', tools: ['web.search'], allowedTools: ['web.fetch'] }),
    ).rejects.toThrow('unknown tool web.fetch in the allowed tools; the tools checked: web.search');
    await expect(
      runConformance({ baseUrl: 'http://127.0.0.1:1', tools: ['web.search'], deniedTool: 'web.fetch' }),
    ).rejects.toThrow('unknown tool web.fetch in the denied tool');
    await expect(runConformance({ baseUrl: 'http://127.0.0.1:1', numRuns: 0 })).rejects.toThrow('numRuns');
  });
});
