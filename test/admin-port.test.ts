import { expect, it } from 'vitest';
import { createGateway, createSharedGateway } from '../mock-server/gateway.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';

/**
 * The admin port's two implementations answer alike: the same admin calls on a gateway in memory and on one
 * whose admin state is on Redis (a script per entity) give the same answers, refusals included, and leave
 * the same state. Each run is traced, then the traces compared, so a difference names the step.
 */
const ADMIN = 'admin-key-for-tests';
const T = Date.parse('2031-05-01T00:00:00Z');

type Fetch = (request: Request) => Promise<Response>;

/**
 * Token generations as the number of times each agent's was raised: in memory a revoke adds one, on Redis it
 * moves to the revoke's stamp (docs/operators.md, "The rule for admin changes"); both only ever go up.
 */
function generationsCounted() {
  const seen = new Map<string, { last: number; raised: number }>();
  const count = (agent: Record<string, unknown>) => {
    if (typeof agent.token_generation !== 'number' || typeof agent.id !== 'string') return agent;
    const was = seen.get(agent.id) ?? { last: 0, raised: 0 };
    const now =
      agent.token_generation > was.last ? { last: agent.token_generation, raised: was.raised + 1 } : was;
    seen.set(agent.id, now);
    return { ...agent, token_generation: now.raised };
  };
  return (shown: Record<string, unknown>) =>
    Array.isArray(shown.agents)
      ? { ...shown, agents: (shown.agents as Record<string, unknown>[]).map(count) }
      : count(shown);
}

async function trace(fetch: Fetch) {
  const out: unknown[] = [];
  const counted = generationsCounted();
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(
      new Request(`http://gw.test/__admin${path}`, {
        method,
        headers: {
          'x-admin-key': ADMIN,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const json = (await response.json()) as Record<string, unknown>;
    // Messages and request ids aside: the status, the code and the state shown.
    const { message: _m, request_id: _r, ...shown } = json;
    out.push([method, path, response.status, counted(shown)]);
  };
  await call('POST', '/agents', { id: 'x', api_key: 'ak_x_0123456789', tier: 'verified' });
  await call('POST', '/agents', { id: 'x', api_key: 'ak_other_0123456789' });
  await call('POST', '/agents', { id: 'y', api_key: 'ak_x_0123456789' });
  await call('PATCH', '/agents/x', { disabled: true, allowlist: ['web.fetch'] });
  await call('PATCH', '/agents/x', { name: 'Ex' });
  await call('PATCH', '/agents/nobody', { disabled: true });
  await call('POST', '/agents/x/revoke-tokens');
  await call('POST', '/agents/x/revoke-tokens');
  await call('POST', '/agents/nobody/revoke-tokens');
  await call('PATCH', '/tools/web.search', { latency_ms: 5 });
  await call('PATCH', '/tools/web.search', { enabled: false });
  await call('POST', '/faults', { match: { agent: 'x' }, kind: 'status', status: 502, count: 2 });
  await call('POST', '/faults', { kind: 'delay', delay_ms: 10 });
  await call('DELETE', '/faults/fault-1');
  await call('DELETE', '/faults/fault-9');
  await call('POST', '/clock/set', { time: T, frozen: true });
  await call('POST', '/clock/advance', { ms: 1500 });
  await call('POST', '/clock/advance', { seconds: 2 });
  await call('POST', '/clock/advance', { ms: 9e15 });
  await call('POST', '/clock/freeze');
  await call('POST', '/clock/set', { time: '2031-05-02T00:00:00Z' });
  // Back into its past: a new clock epoch, counted alike.
  await call('POST', '/clock/set', { time: T - 1000 });
  await call('POST', '/clock/set', { time: T - 2000 });
  await call('POST', '/clock/set', { time: T, frozen: true });
  await call('GET', '/agents');
  await call('GET', '/tools');
  await call('GET', '/faults');
  await call('DELETE', '/faults');
  await call('GET', '/faults');
  return out;
}

describeWithRedis('the admin port: memory and Redis answer alike', () => {
  const redis = useRedis();

  it('the same admin calls give the same answers and leave the same state', async () => {
    const memory = trace(createGateway({ adminKey: ADMIN }).fetch);
    const shared = await createSharedGateway({
      adminKey: ADMIN,
      config: { store: { url: redis.url, key_prefix: 'port', timeout_ms: 10_000 } },
      log: () => {},
    });
    try {
      const onRedis = await trace(shared.fetch);
      // The calls did what they say (refusals where due), then both alike.
      expect(onRedis.map((step) => (step as unknown[])[2])).toEqual([
        201, 409, 409, 200, 200, 404, 200, 200, 404, 200, 200, 201, 201, 200, 404, 200, 200, 200, 400, 200,
        200, 200, 200, 200, 200, 200, 200, 200, 200,
      ]);
      expect(onRedis).toEqual(await memory);
    } finally {
      await shared.close();
    }
  }, 60_000);
});
