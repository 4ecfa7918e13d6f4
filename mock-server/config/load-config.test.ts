import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, deepMerge, formatPath, loadConfig } from './load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('loads the bundled default with the fixture agents the README lists', () => {
    const config = loadConfig();
    expect(config.agents.map((a) => a.id)).toEqual([
      'agent-none',
      'agent-early',
      'agent-verified',
      'agent-allowlisted',
      'agent-revoked',
    ]);
    expect(config.identity.token_ttl_seconds).toBe(3600);
    expect(config.default_tier).toBe('early_access');
  });

  it('lays a small YAML file over the default: mappings merge, lists replace', () => {
    const config = loadConfig({ file: file('small.yaml', 'tools:\n  web.search:\n    enabled: false\n') });
    expect(config.tools['web.search']?.enabled).toBe(false);
    expect(config.tools['web.search']?.tiers).toEqual(['verified']);
    expect(config.tools['web.fetch']?.tiers).toEqual(['early_access', 'verified']);
    expect(config.agents).toHaveLength(5);
  });

  it('accepts JSON files', () => {
    const config = loadConfig({
      file: file('c.json', JSON.stringify({ identity: { token_ttl_seconds: 5 } })),
    });
    expect(config.identity.token_ttl_seconds).toBe(5);
  });

  it('names the file, the path and the reason of every problem', () => {
    const path = file(
      'bad.yaml',
      'agents:\n  - id: a1\n    api_key: key-aaaaaaaa\n    tier: gold\n  - id: a1\n    api_key: key-aaaaaaaa\n    tier: verified\n',
    );
    const error = errorOf(() => loadConfig({ file: path }));
    expect(error.file).toBe(path);
    expect(error.issues).toContainEqual({
      path: 'agents[0].tier',
      message: expect.stringContaining('unknown tier "gold"'),
    });
    expect(error.issues).toContainEqual({ path: 'agents[1].id', message: 'duplicate agent id "a1"' });
    expect(error.issues).toContainEqual({ path: 'agents[1].api_key', message: 'duplicate api_key' });
    expect(error.message).toContain(path);
  });

  it('reports unknown keys (typos) instead of ignoring them', () => {
    const error = errorOf(() =>
      loadConfig({ config: { tools: { 'web.search': { enabeld: false } } } as never }),
    );
    expect(error.issues[0]?.path).toBe('tools["web.search"]');
    expect(error.issues[0]?.message).toMatch(/enabeld/);
  });

  it('reports YAML syntax errors, missing files and non-mapping documents', () => {
    expect(
      errorOf(() => loadConfig({ file: file('syntax.yaml', 'tools: [unclosed\n') })).issues[0]?.message,
    ).toMatch(/flow|collection|expected/i);
    expect(errorOf(() => loadConfig({ file: join(dir, 'missing.yaml') })).issues[0]?.message).toBe(
      'file not found',
    );
    expect(errorOf(() => loadConfig({ file: file('list.yaml', '- 1\n- 2\n') })).issues[0]?.message).toMatch(
      /mapping/,
    );
  });

  it('resolves corpus directories relative to the config file that names them', () => {
    const config = loadConfig({ file: file('corpus.yaml', 'corpus:\n  search: ./my-search\n') });
    expect(config.corpus.search).toBe(join(dir, 'my-search'));
    expect(config.corpus.pages).toMatch(/fixtures[/\\]pages$/);
  });
});

describe('config helpers', () => {
  it('formatPath writes paths the way a user reads them', () => {
    expect(formatPath(['agents', 2, 'tier'])).toBe('agents[2].tier');
    expect(formatPath(['tools', 'web.search', 'tiers', 0])).toBe('tools["web.search"].tiers[0]');
    expect(formatPath([])).toBe('');
  });

  it('deepMerge merges objects and replaces arrays and scalars', () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: undefined })).toEqual({
      a: { b: 1, c: [3] },
      d: 1,
    });
  });
});
