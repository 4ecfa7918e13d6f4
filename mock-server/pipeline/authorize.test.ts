import { describe, expect, it } from 'vitest';
import { identityOf, stageContext, stageWorld, thrown } from '../../test/support/stage-context.ts';
import type { JournalNote } from '../journal/journal-entry.ts';
import { createPolicy } from '../policy/policy.ts';
import { webSearch } from '../tools/web-search.ts';
import { authorize } from './authorize.ts';
import { entryReadings } from './entry-readings.ts';
import type { ToolSpec } from './tool-spec.ts';

const search = {
  tool: 'web.search',
  path: '/v1/web/search',
  field: 'query',
  schema: webSearch.request.schema,
  meaning: webSearch,
  run: () => undefined,
} as ToolSpec;

describe('authorize stage (spec sections 3 and 5.4)', () => {
  it('lets an identity within the tool tiers through at once, reading no body', () => {
    const world = stageWorld();
    const ctx = stageContext(world, { body: '{"query":"x"}' });
    const deps = { policy: createPolicy(world.config.tools) };
    expect(authorize(deps, ctx, identityOf('agent-a', 'verified'), search)).toBeUndefined();
    expect(ctx.note).toEqual({});
  });

  it('refuses a tier outside the tool with 403 access_denied, after noting what the call tried to send', async () => {
    const world = stageWorld();
    const ctx = stageContext(world, {
      body: JSON.stringify({ query: 'weather ak_known_api_key_0123456789' }),
    });
    const deps = { policy: createPolicy(world.config.tools) };
    const refused = await thrown(() => authorize(deps, ctx, identityOf('agent-a', 'early_access'), search));
    expect(refused.code).toBe('access_denied');
    expect(refused.status).toBe(403);
    // The refused call leaked its own key all the same: the journal learns it, redacted, when it is read.
    expect(ctx.note.query).toBeUndefined();
    const entry: JournalNote = { ...ctx.note };
    entryReadings(ctx)?.apply(entry);
    expect(entry.query).toBe('weather [REDACTED:own_api_key]');
    expect(entry.secrets).toEqual(['own_api_key']);
  });

  it('allows a tool the agent is allowlisted for, and refuses a disabled tool to everyone', async () => {
    const world = stageWorld();
    const policy = createPolicy(world.config.tools);
    const allowlisted = { ...identityOf('agent-a', 'early_access'), allowlist: ['web.search' as const] };
    expect(authorize({ policy }, stageContext(world), allowlisted, search)).toBeUndefined();
    policy.updateTool('web.search', { enabled: false });
    const refused = await thrown(() => authorize({ policy }, stageContext(world), identityOf('a'), search));
    expect(refused.code).toBe('access_denied');
  });
});
