import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseToolDeclaration, suiteTools } from './suite-tools.ts';

describe('the tools a conformance run calls', () => {
  it('are the spec’s two at section 4’s paths, with the default bodies, unless told others', () => {
    expect(suiteTools(undefined).map((t) => `${t.name} ${t.method} ${t.path} ${t.body}`)).toEqual([
      'web.search POST /v1/web/search {"query":"agent tool gateway conformance"}',
      'web.fetch POST /v1/web/fetch {"url":"https://example.com/"}',
    ]);
    expect(suiteTools([], { 'web.search': '{"q":"x"}' })[0]?.body).toBe('{"q":"x"}');
  });

  it('are only those declared: a gateway without web.fetch is not asked for it', () => {
    const tools = suiteTools([{ name: 'web.search' }, { name: 'web.extract', path: '/v1/web/extract' }]);
    expect(tools.map((t) => [t.name, t.path, t.body])).toEqual([
      ['web.search', '/v1/web/search', '{"query":"agent tool gateway conformance"}'],
      ['web.extract', '/v1/web/extract', '{}'],
    ]);
  });

  it('reads NAME, NAME=PATH and NAME=PATH=BODY (a body may hold more =)', () => {
    expect(parseToolDeclaration('web.fetch')).toEqual({ name: 'web.fetch' });
    expect(parseToolDeclaration('web.extract=/v1/web/extract')).toEqual({
      name: 'web.extract',
      path: '/v1/web/extract',
    });
    expect(parseToolDeclaration('web.extract=/v1/x={"q":"a=b"}')).toEqual({
      name: 'web.extract',
      path: '/v1/x',
      body: '{"q":"a=b"}',
    });
  });

  it('reads NAME:write-like (a write-like tool) and a body from @FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'suite-tools-'));
    const file = join(dir, 'snapshot.json');
    writeFileSync(file, '{ "url": "https://example.com/a=b" }\n');
    expect(parseToolDeclaration(`web.snapshot:write-like=/v1/web/snapshot=@${file}`)).toEqual({
      name: 'web.snapshot',
      path: '/v1/web/snapshot',
      body: '{ "url": "https://example.com/a=b" }\n',
      writeLike: true,
    });
    expect(parseToolDeclaration('web.snapshot:write-like=/v1/s')).toEqual({
      name: 'web.snapshot',
      path: '/v1/s',
      writeLike: true,
    });
    const [tool] = suiteTools([parseToolDeclaration(`web.snapshot:write-like=/v1/s=@${file}`)]);
    expect(tool).toMatchObject({
      name: 'web.snapshot',
      writeLike: true,
      body: '{ "url": "https://example.com/a=b" }\n',
    });
    expect(() => parseToolDeclaration(`web.snapshot=/v1/s=@${join(dir, 'none.json')}`)).toThrow(
      /the body of web.snapshot cannot be read from .*none\.json: ENOENT/,
    );
    expect(() => parseToolDeclaration('web.snapshot=/v1/s=@')).toThrow('names no file');
  });

  it.each([
    [
      [{ name: 'web.fetch', writeLike: true }],
      'web.fetch cannot be write-like: the spec names it safe to retry',
    ],
    [[{ name: 'Web.Extract', path: '/v1/x' }], 'is not a tool name'],
    [[{ name: 'web.extract' }], "give web.extract's path"],
    [[{ name: 'web.extract', path: 'v1/x' }], 'must start with /'],
    [[{ name: 'web.extract', path: '/v1/x', body: '[1]' }], 'must be a JSON object'],
    [[{ name: 'web.extract', path: '/v1/x', body: '{' }], 'is not valid JSON'],
    [[{ name: 'web.search' }, { name: 'web.search' }], 'web.search is declared twice'],
    [
      [
        { name: 'a.b', path: '/v1/x' },
        { name: 'c.d', path: '/v1/x' },
      ],
      'c.d and a.b share the path /v1/x',
    ],
  ])('refuse %j as the run’s mistake (exit 2)', (declared, message) => {
    expect(() => suiteTools(declared)).toThrow(message);
  });
});
