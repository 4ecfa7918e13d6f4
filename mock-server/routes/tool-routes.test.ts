import { describe, expect, it } from 'vitest';
import { isBuiltInTool, toolDefinitions } from '../tools/index.ts';
import { extraToolRoutes, toolRoute } from './tool-routes.ts';

const noFixture = () => {
  throw new Error('no fixture expected');
};

describe('tool routes', () => {
  it('tells extra tools from built-in ones by the one test, isBuiltInTool, for the routes and their group', () => {
    const tools = toolDefinitions(
      { 'web.search': {}, 'web.fetch': {}, 'web.extract': { path: '/v1/web/extract' } },
      noFixture,
    );
    expect(tools.map((tool) => isBuiltInTool(tool.name))).toEqual([true, true, false]);
    // The route table of the extra tools holds web.extract only, in the reference profile's group.
    expect(extraToolRoutes(tools).map((r) => [r.id, r.path, r.group])).toEqual([
      ['webExtract', '/v1/web/extract', 'reference profile'],
    ]);
    expect(tools.map((tool) => toolRoute(tool).group)).toEqual(['spec', 'spec', 'reference profile']);
  });
});
