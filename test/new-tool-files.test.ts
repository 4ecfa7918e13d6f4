import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toolRouteId } from '../mock-server/tools/tool-route-id.ts';
import { TOOL_NAMES, TOOLS } from '../vocabulary/tools.ts';

/*
 * Tools are data: a tool's name, path and behaviour live in its definition. This lists every source file
 * that still names a built-in tool in code (comments aside), each with the reason it must; a file that starts
 * naming one, or stops, fails here, so the list stays the answer to "what does a new built-in tool need?":
 *   - its name, path, body field and default conformance body in vocabulary/tools.ts,
 *   - its definition in mock-server/tools/<name>.ts and its entry in mock-server/tools/index.ts (keyed by
 *     its name: the type check fails until it is there),
 *   - its provider in mock-server/providers/ with fixtures under fixtures/, its policy in
 *     fixtures/config/default.yaml,
 *   - a test beside the definition, and its row in docs/reference.md.
 * Everything else (routes, pipeline, OpenAPI, policy, limits, journal, proxy, whoami, admin API) derives
 * from the definition. An extra tool needs none of these: a config entry (test/extra-tool.test.ts).
 */
const root = fileURLToPath(new URL('..', import.meta.url));

const EXPECTED: Record<string, string> = {
  'vocabulary/tools.ts': 'the spec names the tools: name, path, body field, default conformance body',
  'vocabulary/endpoints.ts': "section 4's endpoints, the tools among them (spread from tools.ts)",
  'mock-server/scenarios/replay-schema.ts':
    "a recorded answer's endpoint: only the spec's are recorded and replayed",
  // each built-in tool's definition file, named after the tool (web.search: web-search.ts)
  ...Object.fromEntries(
    TOOL_NAMES.map((name) => [
      `mock-server/tools/${name.replaceAll('.', '-')}.ts`,
      `the definition of ${name}`,
    ]),
  ),
  'mock-server/tools/index.ts': 'the registry of built-in definitions',
  'mock-server/client-report/rules/retry-cap.ts':
    'a client rule reads what a search or a fetch is about (its words, its URL) to see rewordings',
  'mock-server/client-report/rules/untrusted-content.ts':
    "spec section 1 rule 1 is about the fetch tool's content (hostile pages) and searches for what it planted",
  'mock-server/client-report/rules/no-secrets-in-requests.ts':
    'spec section 1 rule 2: secrets in search queries or URLs (the place named in a finding)',
  'cli/commands/admin.ts': 'a help example (admin faults arm --operation web.search)',
  'cli/commands/check.ts': "its help names the spec's tools in its examples",
  'cli/option-tables.ts': 'generated from the suite and fault schemas (npm run gen:options)',
  'conformance/run/runner.ts':
    "the spec tools' own body options (--search-body, --fetch-body) and the spec's default denied tool",
  'conformance/checks/authz/allowed-calls-served.ts': "names the spec tools' own body flags in its advice",
  'conformance/suite/suite-options.ts':
    "the suite's option schema: the spec tools' body options and defaults",
};

/** Source files (tests, test support and generated bundles aside) of the folders that ship. */
function sources(): string[] {
  return ['vocabulary', 'mock-server', 'cli', 'conformance'].flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
      .map((name) => relative(root, join(root, folder, name))),
  );
}

/** The code of a file: block comments and line comments removed (a `//` inside a URL string is kept). */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** Any built-in tool by its name, its path or its route id: read from the vocabulary, not listed here. */
const NAMES_A_TOOL = new RegExp(
  TOOL_NAMES.flatMap((name) => [name, TOOLS[name].path, toolRouteId(name)])
    .map(escapeRegExp)
    .join('|'),
);

describe('what a new built-in tool needs', () => {
  it('names the built-in tools only in the files listed, each for its reason', () => {
    const naming = sources()
      .filter((file) => NAMES_A_TOOL.test(codeOf(readFileSync(join(root, file), 'utf8'))))
      .sort();
    expect(naming).toEqual(Object.keys(EXPECTED).sort());
  });

  it('reads code, not comments', () => {
    expect(
      NAMES_A_TOOL.test(codeOf("/** web.search */\nconst a = 1; // web.fetch\nconst u = 'https://x/';")),
    ).toBe(false);
    expect(NAMES_A_TOOL.test(codeOf("const t = 'web.search';"))).toBe(true);
  });
});
