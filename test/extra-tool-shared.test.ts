import { expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import { createSharedGateway } from '../mock-server/gateway.ts';
import { adminCaller } from './support/call.ts';
import { EXTRACT_502_ONCE, extract } from './support/extra-tool.ts';
import { describeWithRedis, type RedisProcess, useRedis } from './support/redis.ts';

/*
 * An extra tool on a shared store: two instances with the same config keep it after admin changes (an
 * instance reads back the settings of every tool it has, not only the built-in ones), and a change to the
 * extra tool's policy made through one instance is in force on the other.
 */
type Shared = Awaited<ReturnType<typeof createSharedGateway>>;
const ADMIN = 'admin-key-for-extra-tool-tests';
let redis: RedisProcess;

const admin = adminCaller(ADMIN);

/** Two instances of a gateway with one extra tool on one store (its keys under `prefix`), on one frozen clock. */
async function twoInstances(url: string, prefix: string): Promise<[Shared, Shared]> {
  const config = {
    tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } },
    store: { url, key_prefix: prefix, timeout_ms: 10_000 },
  };
  const clock = createClock({ frozen: true, startAt: Date.parse('2031-05-01T12:00:00Z') });
  return [
    await createSharedGateway({ config, clock, adminKey: ADMIN, log: () => {} }),
    await createSharedGateway({ config, clock, adminKey: ADMIN, log: () => {} }),
  ];
}

describeWithRedis('an extra tool on a shared store', () => {
  redis = useRedis();

  it('survives admin changes and takes a policy change made on another instance', async () => {
    const [a, b] = await twoInstances(redis.url, 'extra1');
    try {
      const verified = a.mintToken('agent-verified');
      const early = a.mintToken('agent-early');
      expect((await extract(b, verified)).status).toBe(200);
      // An unrelated admin change (an agent's tier): every instance reads the admin state back.
      expect((await admin(a, 'PATCH', '/agents/agent-none', { tier: 'early_access' })).status).toBe(200);
      expect((await extract(b, verified)).status).toBe(200);
      expect((await extract(a, verified)).status).toBe(200);
      // The extra tool's own policy, changed through a, holds on b once b has read it back.
      expect((await extract(b, early)).status).toBe(403);
      expect((await admin(a, 'PATCH', '/tools/web.extract', { tiers: ['early_access'] })).status).toBe(200);
      // b takes it over at its next poll or message (docs/operators.md states within about 1 s); bounded.
      let tools: { tools: Record<string, { tiers: string[] }> } = { tools: {} };
      for (let i = 0; i < 100; i++) {
        tools = (await admin(b, 'GET', '/tools')).body as typeof tools;
        if (tools.tools['web.extract']?.tiers.includes('early_access')) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(tools.tools['web.extract']?.tiers).toEqual(['early_access']);
      expect((await extract(b, early)).status).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('takes a fault on the extra tool armed through another instance, and refuses one on a tool it lacks', async () => {
    const [a, b] = await twoInstances(redis.url, 'extra2');
    try {
      const verified = a.mintToken('agent-verified');
      const unknown = await admin(a, 'POST', '/faults', {
        match: { operation: 'web.extrakt' },
        kind: 'status',
        count: 1,
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'invalid_request', field: 'match.operation' });
      const armed = await admin(a, 'POST', '/faults', EXTRACT_502_ONCE);
      expect(armed.status).toBe(201);
      // b reads the armed fault back at its next poll or message; bounded.
      let listed: { faults: { match: { operation?: string } }[] } = { faults: [] };
      for (let i = 0; i < 100 && listed.faults.length === 0; i++) {
        listed = (await admin(b, 'GET', '/faults')).body as typeof listed;
        if (listed.faults.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(listed.faults.map((f) => f.match.operation)).toEqual(['web.extract']);
      expect((await extract(b, verified)).status).toBe(502);
      // Spent in the store: neither instance strikes again.
      expect((await extract(a, verified)).status).toBe(200);
      expect((await extract(b, verified)).status).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);
});
