import { TOOL_NAMES, type ToolName } from '../../vocabulary/tools.ts';
import { type ExtraToolDeclaration, extraToolDefinition, type ReadFixture } from './extra-tool.ts';
import type { AnyToolDefinition } from './tool-definition.ts';
import { webFetch } from './web-fetch.ts';
import { webSearch } from './web-search.ts';

export type { AnyToolDefinition, ToolDefinition, ToolProviders } from './tool-definition.ts';

/**
 * The built-in tools, the spec's (section 1), one definition file each, in the spec's order. A new built-in
 * tool is a definition file here, its name in `vocabulary/tools.ts`, fixtures, a test and docs
 * (`test/new-tool-files.test.ts` lists them); nothing else names it.
 */
const BUILT_IN = {
  'web.search': webSearch,
  'web.fetch': webFetch,
} as const satisfies Record<ToolName, AnyToolDefinition>;

/**
 * The built-in tools in the vocabulary's order. Keyed by `ToolName` above, so a name added to
 * `vocabulary/tools.ts` without its definition here fails the type check (no cast lets it through).
 */
export const BUILT_IN_TOOLS: readonly AnyToolDefinition[] = TOOL_NAMES.map((name) => BUILT_IN[name]);

/**
 * Whether a name is a built-in tool's: the one test of "built-in or extra" (the route table, OpenAPI's
 * groups and the config's tool list all ask it).
 */
export const isBuiltInTool = (name: string): name is ToolName => Object.hasOwn(BUILT_IN, name);

/** The built-in tool of that name. */
export const builtInTool = (name: ToolName): AnyToolDefinition => BUILT_IN[name];

/**
 * Every tool a config declares, built-in first (in the spec's order), then its extra tools in the order
 * written. An extra tool's fixture answer is read once, here, with `readFixture`.
 *
 * @example
 * toolDefinitions({ 'web.search': {}, 'web.fetch': {}, 'web.extract': { path: '/v1/web/extract' } }, readYamlFile);
 */
export function toolDefinitions(
  tools: Readonly<Record<string, ExtraToolDeclaration>>,
  readFixture: ReadFixture,
): AnyToolDefinition[] {
  const extra = Object.entries(tools)
    .filter(([name]) => !isBuiltInTool(name))
    .map(([name, declaration]) => extraToolDefinition(name, declaration, readFixture));
  return [...TOOL_NAMES.map(builtInTool), ...extra];
}
