import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The conformance suite judges gateways it has never seen, so it must not lean on the reference gateway's
 * code: it never imports mock-server/. What both need of the spec (tools, endpoints, error codes, the
 * identity header, spec references, Retry-After) lives in vocabulary/, which imports nothing outside itself
 * (vocabulary/spec.test.ts reads its import lines).
 */
const root = fileURLToPath(new URL('..', import.meta.url));

/** The relative module specifiers a file imports or re-exports, resolved to paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"\n]+)\1/g)].map((m) =>
    relative(root, resolve(file, '..', m[2] as string)),
  );
}

/** The library sources of a folder (tests excluded: they may start a reference gateway to check against). */
const sourcesOf = (folder: string) =>
  readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => join(root, folder, name));

describe('the spec vocabulary is the only code the suite and the gateway share', () => {
  it('conformance/ never imports mock-server/ (it imports vocabulary/ instead)', () => {
    const sources = sourcesOf('conformance');
    expect(sources.length).toBeGreaterThan(20);
    const shared = new Set<string>();
    for (const file of sources)
      for (const target of importsOf(file)) {
        expect(target.startsWith('mock-server'), `${relative(root, file)} imports ${target}`).toBe(false);
        if (target.startsWith('vocabulary/')) shared.add(target);
      }
    expect(shared.size).toBeGreaterThan(2);
  });

  it('mock-server/ never imports conformance/ (what both need, such as redaction, lives in vocabulary/)', () => {
    for (const file of sourcesOf('mock-server'))
      for (const target of importsOf(file))
        expect(target.startsWith('conformance'), `${relative(root, file)} imports ${target}`).toBe(false);
  });

  it("the journal's writers (pipeline/, proxy/, journal/, tools/) never import its grader (client-report/)", () => {
    const writers = ['mock-server/pipeline', 'mock-server/proxy', 'mock-server/journal', 'mock-server/tools'];
    for (const file of writers.flatMap(sourcesOf))
      for (const target of importsOf(file))
        expect(
          target.startsWith('mock-server/client-report'),
          `${relative(root, file)} imports ${target}`,
        ).toBe(false);
  });

  it('mock-server/ takes the vocabulary from vocabulary/ too', () => {
    const targets = new Set(sourcesOf('mock-server').flatMap(importsOf));
    for (const module of [
      'vocabulary/error-codes.ts',
      'vocabulary/endpoints.ts',
      'vocabulary/tools.ts',
      'vocabulary/identity-header.ts',
    ])
      expect(targets, module).toContain(module);
  });

  it('resolves import lines as the tests above need', () => {
    const file = join(root, 'conformance/check-kit/support.ts');
    expect(importsOf(file)).toContain('vocabulary/endpoints.ts');
    expect(importsOf(file)).toContain('conformance/check-kit/check-contract.ts');
  });
});
