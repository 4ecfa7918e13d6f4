import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent } from '../mock-server/identity/agent-registry.ts';
import {
  type AdminState,
  configStamps,
  createRedisAdmin,
  type RedisAdmin,
} from '../mock-server/store/redis-admin.ts';
import { connectRedis, type RedisConnection } from '../mock-server/store/redis-connection.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';

/*
 * The rebuild rule of the shared admin state, step by step on a real Redis (docs/operators.md, "The rule for
 * admin changes"): copies of the state merged into an emptied store in either order give the newest value of
 * each field; a change on a store holding no state is refused; a revocation never repeats a generation.
 */

const agent = (id: string): Agent => ({
  id,
  name: id,
  apiKey: `ak_${id}_0123456789`,
  tier: 'verified',
  allowlist: [],
  disabled: false,
  tokenGeneration: 0,
  incarnation: 'c0',
});
const CONFIG: AdminState = {
  scenario: null,
  agents: [agent('a'), agent('b')],
  tools: { 'web.search': { enabled: true, tiers: ['verified'] } } as unknown as AdminState['tools'],
  faults: [],
  clock: { offset: 0, epoch: 0 },
};

describeWithRedis('the shared admin state is rebuilt from the copies, newest value first', () => {
  const redis = useRedis();
  let connection: RedisConnection;
  let prefixes = 0;
  const opened: RedisConnection[] = [];
  beforeAll(async () => {
    connection = await connectRedis({ url: redis.url, keyPrefix: 'merge', timeoutMs: 10_000, log: () => {} });
  });
  afterAll(async () => {
    await connection?.close();
    for (const own of opened) await own.close();
  });
  /** An admin on a key prefix of its own, seeded with the config. */
  const fresh = async (): Promise<RedisAdmin> => {
    const own = await connectRedis({
      url: redis.url,
      keyPrefix: `merge${++prefixes}`,
      timeoutMs: 10_000,
      log: () => {},
    });
    opened.push(own);
    const admin = createRedisAdmin(own);
    await admin.merge(CONFIG, configStamps(CONFIG), 'life-1');
    return admin;
  };
  const emptied = async (admin: RedisAdmin) => {
    // Every key of its prefix, as a restart without persistence loses them.
    await connection.redis.eval(
      "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1",
      0,
      `${admin.keys.seed.replace(/admin:seed$/, '')}*`,
    );
  };
  const tools = ['web.search'];

  for (const order of ['stale copy first', 'newer copy first'] as const) {
    it(`an emptied store takes each field's newest value, whatever the order of merges (${order})`, async () => {
      const admin = await fresh();
      // The stale copy: read before the later changes (an instance paused, or behind).
      expect((await admin.updateAgent('a', { disabled: true })).kind).toBe('done');
      const stale = await admin.read(tools);
      // Newer changes: a enabled again, its allowlist and b's tier changed, a revoked, a tool field set.
      expect((await admin.updateAgent('a', { disabled: false, allowlist: ['web.search'] })).kind).toBe(
        'done',
      );
      expect((await admin.updateAgent('b', { tier: 'early_access' })).kind).toBe('done');
      const revoke = await admin.revokeTokens('a');
      expect((await admin.updateTool('web.search', { enabled: false })).kind).toBe('done');
      const newer = await admin.read(tools);
      // Another instance changed b's name after the newer copy was read, and only the store had it: lost
      // with the store (no copy holds it), never brought back by a copy.
      await admin.updateAgent('b', { name: 'gone with the store' });
      await emptied(admin);
      expect((await admin.read(tools)).seed).toBe('');

      const copies = order === 'stale copy first' ? [stale, newer] : [newer, stale];
      for (const copy of copies) await admin.merge(copy, copy.stamps, `life-${order}`);
      const rebuilt = await admin.read(tools);
      const a = rebuilt.agents.find((x) => x.id === 'a');
      const b = rebuilt.agents.find((x) => x.id === 'b');
      expect(a).toMatchObject({ disabled: false, allowlist: ['web.search'] });
      expect(a?.tokenGeneration).toBe(revoke.kind === 'done' ? revoke.extra : -1);
      expect(b).toMatchObject({ tier: 'early_access', name: 'b' });
      expect(rebuilt.tools['web.search']).toMatchObject({ enabled: false });
      // Merging the stale copy once more changes nothing.
      await admin.merge(stale, stale.stamps, 'ignored');
      const again = await admin.read(tools);
      expect(again.agents).toEqual(rebuilt.agents);
      expect(again.version).toBe(rebuilt.version);
    });
  }

  it('a change on a store that holds no admin state is refused (not applied, not a 404); a revocation never repeats a generation', async () => {
    const admin = await fresh();
    const first = await admin.revokeTokens('a');
    const copy = await admin.read(tools);
    await emptied(admin);
    expect(await admin.revokeTokens('a')).toEqual({ kind: 'not_rebuilt' });
    expect(await admin.updateAgent('a', { disabled: true })).toEqual({ kind: 'not_rebuilt' });
    expect((await admin.read(tools)).agents).toEqual([]);
    // Rebuilt from a copy that missed the first revocation (the config): the next one still moves past it.
    await admin.merge(CONFIG, configStamps(CONFIG), 'life-2');
    const second = await admin.revokeTokens('a');
    expect(first.kind === 'done' && second.kind === 'done' && second.extra > first.extra).toBe(true);
    // And the copy that saw the first one, merged later, never lowers it.
    await admin.merge(copy, copy.stamps, 'ignored');
    const a = (await admin.read(tools)).agents.find((x) => x.id === 'a');
    expect(a?.tokenGeneration).toBe(second.kind === 'done' ? second.extra : -1);
  });

  it('a store written before stamps keeps its values against a config merged in, and any change wins over them', async () => {
    const admin = await fresh();
    expect((await admin.updateAgent('a', { disabled: true, allowlist: ['web.fetch'] })).kind).toBe('done');
    expect((await admin.updateTool('web.search', { enabled: false })).kind).toBe('done');
    const created = { ...agent('made'), incarnation: 'c1' };
    expect((await admin.createAgent(created)).kind).toBe('done');
    // The store as a version before stamps left it: no stamps, no seed, no history.
    const adminPrefix = admin.keys.seed.replace(/seed$/, '');
    await connection.redis.eval(
      `for _, k in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
        if redis.call('TYPE', k).ok == 'hash' then
          for _, f in ipairs(redis.call('HKEYS', k)) do
            if string.sub(f, 1, 1) == '~' then redis.call('HDEL', k, f) end
          end
        end
      end
      for _, n in ipairs({'seed', 'stamp', 'replaced', 'faults_cleared', 'head', 'history'}) do
        redis.call('DEL', ARGV[1] .. n)
      end
      return 1`,
      0,
      adminPrefix,
    );
    const old = await admin.read(tools);
    expect(old.seed).toBe('');
    expect(old.stamps.agents.a?.fields.disabled).toBe(0);
    // An upgraded instance starts on it and merges its config: the store's values stay.
    await admin.merge(CONFIG, configStamps(CONFIG), 'life-upgraded');
    const upgraded = await admin.read(tools);
    expect(upgraded.agents.find((x) => x.id === 'a')).toMatchObject({
      disabled: true,
      allowlist: ['web.fetch'],
    });
    expect(upgraded.agents.map((x) => x.id)).toContain('made');
    expect(upgraded.tools['web.search']).toMatchObject({ enabled: false });
    // A change made now wins, and a config merged again does not undo it.
    expect((await admin.updateAgent('a', { disabled: false })).kind).toBe('done');
    await admin.merge(CONFIG, configStamps(CONFIG), 'ignored');
    expect((await admin.read(tools)).agents.find((x) => x.id === 'a')?.disabled).toBe(false);
  });
});
