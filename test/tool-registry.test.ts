import { describe, expect, it } from 'vitest';
import { suiteTools } from '../conformance/suite/suite-tools.ts';
import { type AnyToolDefinition, BUILT_IN_TOOLS, builtInTool } from '../mock-server/tools/index.ts';
import { webSearch } from '../mock-server/tools/web-search.ts';
import { SPEC_TOOL_NAMES, specToolNames, TOOL_NAMES, TOOLS, type ToolName } from '../vocabulary/tools.ts';

describe('the tool registry cannot lie', () => {
  it('a built-in tool without its definition fails the type check', () => {
    // The registry is keyed by ToolName with `satisfies`: the same shape missing a tool is a type error,
    // so a name added to the vocabulary alone never compiles into a registry that crashes at run time.
    // @ts-expect-error web.fetch has no definition here
    const halfDeclared = { 'web.search': webSearch } satisfies Record<ToolName, AnyToolDefinition>;
    expect(Object.keys(halfDeclared)).toHaveLength(1);
    expect(BUILT_IN_TOOLS.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    for (const name of TOOL_NAMES) expect(builtInTool(name).vocabulary).toEqual(TOOLS[name]);
  });

  it("the suite asks every gateway for the spec's tools only, never the reference gateway's own", () => {
    const vocabulary = {
      'web.search': { profile: 'spec' },
      'web.snapshot': { profile: 'gateway' },
      'web.fetch': { profile: 'spec' },
    } as const;
    expect(specToolNames(vocabulary)).toEqual(['web.search', 'web.fetch']);
    const expected = TOOL_NAMES.filter((name) => TOOLS[name].profile === 'spec');
    expect(SPEC_TOOL_NAMES).toEqual(expected);
    expect(suiteTools(undefined).map((tool) => tool.name)).toEqual(expected);
  });
});
