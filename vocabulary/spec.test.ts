import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ENDPOINTS,
  ERROR_CODES,
  ERROR_STATUSES,
  PROTECTED_ENDPOINTS,
  SPEC_ENDPOINTS,
  SPEC_ERROR_CODES,
  TOOL_NAMES,
  TOOLS,
} from './index.ts';

const folder = new URL('.//', import.meta.url);
const sources = readdirSync(folder).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

/** Every module specifier a source names: `from '…'`, `import '…'`, `import('…')`, `export … from '…'`. */
const specifiers = (text: string) =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"\n]+)\1/g)].map((m) => m[2] as string);

describe('vocabulary/ (the vocabulary both the gateway and the suite import)', () => {
  it('imports nothing outside itself: no package, no node: module, no other folder', () => {
    expect(sources.length).toBeGreaterThan(5);
    for (const name of sources) {
      const imported = specifiers(readFileSync(new URL(name, folder), 'utf8'));
      for (const specifier of imported)
        expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[\w.-]+\.ts$/);
    }
  });

  it('reads import lines as the test above needs them', () => {
    expect(specifiers("import { a } from './a.ts';\nexport * from \"../b.ts\";\nimport 'zod';")).toEqual([
      './a.ts',
      '../b.ts',
      'zod',
    ]);
    expect(specifiers("const m = await import('node:fs');")).toEqual(['node:fs']);
  });

  it('has every source named in index.ts', () => {
    const index = specifiers(readFileSync(new URL('index.ts', folder), 'utf8'));
    for (const name of sources.filter((n) => n !== 'index.ts')) expect(index).toContain(`./${name}`);
  });

  it('names the spec section 4 endpoints under /v1/ (section 9), the tools among them', () => {
    expect(Object.entries(SPEC_ENDPOINTS).map(([id, e]) => `${id} ${e.method} ${e.path}`)).toEqual([
      'health GET /v1/health',
      'whoami GET /v1/whoami',
      'web.search POST /v1/web/search',
      'web.fetch POST /v1/web/fetch',
    ]);
    for (const tool of TOOL_NAMES) expect(ENDPOINTS[tool].path).toBe(TOOLS[tool].path);
    // every tool the reference gateway serves needs a token, its own ones too
    expect(PROTECTED_ENDPOINTS).toEqual(['whoami', ...TOOL_NAMES]);
    const paths = Object.values(ENDPOINTS).map((e) => e.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('gives the section 7 codes their statuses, first, and every code a 4xx or 5xx status', () => {
    expect(SPEC_ERROR_CODES.map((code) => `${ERROR_STATUSES[code]} ${code}`)).toEqual([
      '401 missing_identity_token',
      '401 invalid_identity_token',
      '403 access_denied',
      '429 rate_limited',
    ]);
    expect(ERROR_CODES.slice(0, 4)).toEqual(SPEC_ERROR_CODES);
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(ERROR_STATUSES[code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUSES[code]).toBeLessThan(600);
    }
  });
});
