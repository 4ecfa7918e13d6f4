import { describe, expect, it } from 'vitest';
import { TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { extraToolDefinition } from './extra-tool.ts';
import { BUILT_IN_TOOLS, toolDefinitions } from './index.ts';
import { requestKey } from './request-meaning.ts';
import type { ToolProviders } from './tool-definition.ts';
import { toolRouteId } from './tool-route-id.ts';

const providers = { seed: 7 } as ToolProviders;
const noFixture = () => {
  throw new Error('no fixture expected');
};

describe('an extra tool from its declaration', () => {
  it('answers with a result generated from the request: the same body, the same answer, whatever the key order', () => {
    const tool = extraToolDefinition('web.extract', { path: '/v1/web/extract' }, noFixture);
    const run = tool.provider(providers);
    const answer = run({ url: 'https://a.example/', mode: 'text' });
    expect(run({ mode: 'text', url: 'https://a.example/' })).toEqual(answer);
    expect(answer).toMatchObject({ tool: 'web.extract', source: 'generated' });
    expect(tool.answer.schema.parse(answer)).toEqual(answer);
    expect((run({ url: 'https://b.example/' }) as { id: string }).id).not.toBe((answer as { id: string }).id);
    // Another seed, another world.
    expect(
      tool.provider({ seed: 8 } as ToolProviders)({ url: 'https://a.example/', mode: 'text' }),
    ).not.toEqual(answer);
  });

  it('answers with its fixture file, read once; marks untrusted answers', () => {
    let reads = 0;
    const tool = extraToolDefinition(
      'docs.lookup',
      { path: '/v1/docs/lookup', answer: { fixture: '/abs/lookup.json' }, untrusted: true },
      (file) => {
        reads++;
        return { file };
      },
    );
    const run = tool.provider(providers);
    expect(run({})).toEqual({ file: '/abs/lookup.json' });
    expect(run({ other: 1 })).toEqual({ file: '/abs/lookup.json' });
    expect(reads).toBe(1);
    expect(tool.untrusted).toBe(true);
    const generated = extraToolDefinition('x.y', { path: '/v1/x/y', untrusted: true }, noFixture);
    expect(generated.provider(providers)({})).toMatchObject({ untrusted: true });
  });

  it('means its whole body by default, or the fields its declaration names', () => {
    const whole = extraToolDefinition('web.extract', { path: '/v1/web/extract' }, noFixture);
    expect(requestKey(whole, { a: 1, b: 2 })).toBe(requestKey(whole, { b: 2, a: 1 }));
    expect(requestKey(whole, { a: 1, b: 2 })).not.toBe(requestKey(whole, { a: 1, b: 3 }));
    const byUrl = extraToolDefinition(
      'web.extract',
      { path: '/v1/web/extract', meaning: ['url'] },
      noFixture,
    );
    expect(requestKey(byUrl, { url: 'u', attempt: 1 })).toBe(requestKey(byUrl, { url: 'u', attempt: 2 }));
    expect(requestKey(byUrl, { url: 'u' })).not.toBe(requestKey(byUrl, { url: 'v' }));
  });
});

describe('the tool registry', () => {
  it('lists the built-in tools first, in the spec order, then the config’s', () => {
    expect(BUILT_IN_TOOLS.map((t) => [t.name, t.vocabulary.profile, t.routeId])).toEqual(
      TOOL_NAMES.map((name) => [name, TOOLS[name].profile, toolRouteId(name)]),
    );
    expect(BUILT_IN_TOOLS.slice(0, 2).map((t) => t.routeId)).toEqual(['webSearch', 'webFetch']);
    // the config lists the extra tool first: the built-in ones still come first, in the vocabulary's order
    const tools = toolDefinitions(
      { 'web.extract': { path: '/v1/web/extract' }, 'web.fetch': {}, 'web.search': {} },
      noFixture,
    );
    expect(tools.map((t) => `${t.name} ${t.vocabulary.path} ${t.vocabulary.profile}`)).toEqual([
      ...TOOL_NAMES.map((name) => `${name} ${TOOLS[name].path} ${TOOLS[name].profile}`),
      'web.extract /v1/web/extract gateway',
    ]);
  });

  it('names routes in camel case', () => {
    expect(['web.search', 'web.extract', 'docs.lookup-v2', 'calc'].map(toolRouteId)).toEqual([
      'webSearch',
      'webExtract',
      'docsLookupV2',
      'calc',
    ]);
  });
});
