import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../vocabulary/tools.ts';
import { ConfigError, loadConfig } from './load-config.ts';
import type { GatewayConfigOverlay } from './schema.ts';

/** The issues loading this config raises, as `path: message` lines. */
function issuesOf(config: unknown): string[] {
  try {
    loadConfig({ config: config as GatewayConfigOverlay });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  return [];
}

describe("the config's tools: built-in policies and extra tools", () => {
  it('takes the smallest declaration of an extra tool (name, path, tiers), defaults filled in', () => {
    const config = loadConfig({
      config: { tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } } },
    });
    expect(config.tools['web.extract']).toEqual({
      path: '/v1/web/extract',
      tiers: ['verified'],
      enabled: true,
      latency_ms: 0,
    });
    expect(Object.keys(config.tools)).toEqual([...TOOL_NAMES, 'web.extract']);
  });

  it('resolves an answer fixture against the config file (the working directory for an object)', () => {
    const config = loadConfig({
      config: { tools: { 'x.y': { path: '/v1/x/y', answer: { fixture: 'answers/y.json' } } } },
    });
    expect(config.tools['x.y']?.answer).toEqual({ fixture: `${process.cwd()}/answers/y.json` });
  });

  it.each([
    [
      { 'web.extract': { tiers: ['verified'] } },
      `tools["web.extract"].path: a tool beyond ${TOOL_NAMES.join(' and ')} needs a path`,
    ],
    [
      { 'web.extract': { path: '/v1/web/search' } },
      'tools["web.extract"].path: /v1/web/search is already web.search\'s path',
    ],
    [{ 'web.extract': { path: '/v1/whoami' } }, "/v1/whoami is already whoami's path"],
    [
      { a: { path: '/v1/same' }, b: { path: '/v1/same' } },
      "tools.b.path: /v1/same is already a's path: give b a path of its own",
    ],
    [
      { 'Web.Extract': { path: '/v1/x' } },
      'tools["Web.Extract"]: "Web.Extract" is not a tool name: lower-case words joined by dots',
    ],
    [{ whoami: { path: '/v1/who' } }, 'tools.whoami: "whoami" names an endpoint of the gateway, not a tool'],
    [{ 'web.extract': { path: 'v1/web/extract' } }, 'must be a path under /v1/'],
    [{ 'web.extract': { path: '/v1/:id' } }, 'must be a path under /v1/'],
    [
      { 'web.search': { path: '/v1/other' } },
      'tools["web.search"].path: web.search is built in: its path is its own',
    ],
    [
      { 'web.extract': { path: '/v1/x', answer: { file: 'a.json' } } },
      'must be { fixture: FILE } or { generator: seeded }',
    ],
    [{ 'web.extract': { path: '/v1/x', tiers: ['gold'] } }, 'unknown tier "gold"'],
    [{ 'web.extract': { path: '/v1/x', colour: 'red' } }, 'colour'],
    [
      { 'web-extract': { path: '/v1/a' }, 'web.extract': { path: '/v1/b' } },
      'would share the OpenAPI operation id webExtract',
    ],
  ])('refuses %j, saying so', (tools, message) => {
    const issues = issuesOf({ tools });
    expect(issues.join('\n')).toContain(message);
  });

  it('holds allowlists and rate-limit rules to the tools the config declares', () => {
    const issues = issuesOf({
      agents: [{ id: 'a', api_key: 'ak_test_0001', tier: 'verified', allowlist: ['web.extract'] }],
      rate_limits: {
        rules: [
          {
            name: 'r',
            scope: 'agent',
            algorithm: 'fixed_window',
            limit: 1,
            window_seconds: 1,
            operations: ['web.extract'],
          },
        ],
      },
    });
    expect(issues).toEqual([
      `agents[0].allowlist[0]: unknown tool "web.extract" (tools of this config: ${TOOL_NAMES.join(', ')})`,
      `rate_limits.rules[0].operations[0]: unknown tool "web.extract" (tools of this config: ${TOOL_NAMES.join(', ')})`,
    ]);
    expect(
      issuesOf({
        tools: { 'web.extract': { path: '/v1/web/extract' } },
        agents: [{ id: 'a', api_key: 'ak_test_0001', tier: 'verified', allowlist: ['web.extract'] }],
      }),
    ).toEqual([]);
  });
});
