import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';

/** The fenced blocks of a section of a doc, by language, in order. */
function blocksOf(doc: string, heading: string, lang: string): string[] {
  const text = readFileSync(new URL(`../docs/${doc}`, import.meta.url), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${doc} has no "${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  // Fences pair up in order: an opening line (```lang) and the next bare ``` closes it.
  const blocks: string[] = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of section.split('\n')) {
    if (open === undefined && line.startsWith('```')) open = { lang: line.slice(3).trim(), lines: [] };
    else if (open !== undefined && line === '```') {
      if (open.lang === lang) blocks.push(`${open.lines.join('\n')}\n`);
      open = undefined;
    } else open?.lines.push(line);
  }
  return blocks;
}

const dir = mkdtempSync(join(tmpdir(), 'docs-extra-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/reference.md, "Extra tools": the example config', () => {
  it('loads as written and serves both tools as the text says', async () => {
    const [yaml] = blocksOf('reference.md', '### Extra tools', 'yaml');
    expect(yaml).toContain('web.extract');
    const file = join(dir, 'extra-tools.yaml');
    writeFileSync(file, yaml as string);
    writeFileSync(join(dir, 'lookup.json'), JSON.stringify({ topic: 'from the fixture' }));
    const gateway = createGateway({ configFile: file, log: () => {} });
    const call = async (path: string, agent: string, body: unknown) => {
      const response = await gateway.fetch(
        new Request(`http://gw.test${path}`, {
          method: 'POST',
          headers: { 'x-agent-identity': gateway.mintToken(agent), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const extract = await call('/v1/web/extract', 'agent-verified', { url: 'https://example.com/' });
    expect(extract.status).toBe(200);
    // The answer's fields, as the curl example shows them.
    const [shown] = blocksOf('reference.md', '### Extra tools', '').filter((b) => b.includes('curl'));
    const shownKeys = [...(shown ?? '').matchAll(/"(\w+)":/g)].map((m) => m[1]).filter((k) => k !== 'url');
    expect(Object.keys(extract.body)).toEqual(shownKeys);
    expect((await call('/v1/web/extract', 'agent-early', { url: 'https://example.com/' })).status).toBe(403);
    const lookup = await call('/v1/docs/lookup', 'agent-early', { topic: 'x', attempt: 1 });
    expect(lookup).toEqual({ status: 200, body: { topic: 'from the fixture' } });
    // meaning: [topic]: the attempt counter does not make it another request.
    await call('/v1/docs/lookup', 'agent-early', { topic: 'x', attempt: 2 });
    const keys = gateway.journal
      .list({ agent: 'agent-early' })
      .filter((e) => e.operation === 'docs.lookup')
      .map((e) => e.request_key);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(gateway.config.rate_limits.rules.map((r) => r.name)).toContain('extract-cap');
  });
});
