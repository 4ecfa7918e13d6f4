import { afterAll, beforeAll, expect, it } from 'vitest';
import type { GatewayConfigOverlay, Operation } from '../mock-server/config/schema.ts';
import type { GatewayError } from '../mock-server/errors.ts';
import type { RecordReader } from '../mock-server/journal/record-bytes.ts';
import type { ExchangeWork } from '../mock-server/journal/record-ring.ts';
import { createRedisState } from '../mock-server/store/redis-state.ts';
import { connectSharedStore, type SharedStore } from '../mock-server/store/shared-store.ts';
import type { StatePort } from '../mock-server/store/state-port.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';
import { identityOf, stageWorld } from './support/stage-context.ts';
import { syntheticEntry } from './support/synthetic-journal.ts';

/** An exchange whose only header tells which it is: built at once on Redis, kept as its number in memory. */
function numberedExchange(n: number): ExchangeWork {
  return {
    build: () => ({
      request_headers: [['x-n', String(n)]],
      request_body_bytes: 0,
      response_headers: [],
      response_body_bytes: 0,
    }),
    recordTo(writer) {
      writer.ref(readNumbered);
      writer.number(n);
    },
  };
}
const readNumbered = (reader: RecordReader) => numberedExchange(reader.number());

/**
 * The state port's two implementations answer alike: the same calls on the memory port and on the Redis
 * port give the same decisions (stages never ask which one they have). Each run is traced, then the traces
 * compared, so a difference names the step.
 */
const OVERLAY: GatewayConfigOverlay = {
  rate_limits: {
    rules: [{ name: 'per-agent', scope: 'agent', algorithm: 'fixed_window', limit: 2, window_seconds: 60 }],
    concurrency: { per_agent: 2 },
  },
};

async function trace(state: StatePort, world: ReturnType<typeof stageWorld>, spent: string[]) {
  const out: unknown[] = [];
  const code = async (call: () => unknown) => {
    try {
      await call();
      return 'ok';
    } catch (error) {
      return (error as GatewayError).code;
    }
  };
  const now = world.clock.now();
  // Limits: two admitted (holding slots), the third refused by the rule; after a release still refused by
  // the rule; another agent admitted; concurrency after the rule's window moves on.
  const admit = async (agent: string, op: Operation = 'web.search') => {
    const decision = await state.limits.admit(identityOf(agent), op, now, 2);
    if (decision.kind !== 'decided') return { kind: decision.kind };
    return {
      allowed: decision.result.allowed,
      remaining: decision.result.outcomes.map((o) => o.remaining),
      retryAfterMs: decision.result.allowed ? undefined : decision.result.retryAfterMs,
      inFlight: decision.result.allowed ? decision.inFlight : undefined,
      release: decision.release,
    };
  };
  const a1 = await admit('agent-a');
  const a2 = await admit('agent-a');
  const a3 = await admit('agent-a');
  const b1 = await admit('agent-b');
  const shown = ({ release: _release, ...decision }: Awaited<ReturnType<typeof admit>>) => decision;
  out.push(['limits', ...[a1, a2, a3, b1].map(shown)]);
  out.push([
    'concurrency',
    (await state.limits.admit(identityOf('agent-a'), 'whoami', now + 61_000, 2)).kind,
  ]);
  a1.release?.();
  a2.release?.();
  const after = await state.limits.admit(identityOf('agent-a'), 'whoami', now + 61_000, 2);
  out.push(['after release', after.kind, after.kind === 'decided' && after.result.allowed]);

  // Idempotency: new, in use (409), stored and replayed, reused with another request (422).
  const begun = await state.idempotency.begin('agent-a', 'k1', 'fp1', now);
  out.push(['idem new', begun.kind]);
  out.push(['idem busy', await code(() => state.idempotency.begin('agent-a', 'k1', 'fp1', now))]);
  const response = { status: 200, body: '{"ok":true}', headers: { 'cache-control': 'no-store' } };
  state.idempotency.finish(
    'agent-a',
    'k1',
    'fp1',
    now,
    response,
    begun.kind === 'new' ? begun.storeKey : undefined,
  );
  // The Redis port settles without waiting: let its write land.
  await new Promise((resolve) => setTimeout(resolve, 50));
  out.push(['idem replay', await state.idempotency.begin('agent-a', 'k1', 'fp1', now)]);
  out.push(['idem reused', await code(() => state.idempotency.begin('agent-a', 'k1', 'fp2', now))]);

  // Journal: three entries in order; an agent's; the exchange built before it is listed; cleared.
  for (const [i, agent] of ['a', 'b', 'a'].entries()) {
    const entry = syntheticEntry(i, agent);
    state.journal.record(entry, numberedExchange(i));
  }
  const page = await state.journal.page({});
  out.push(['journal', page.entries.map((e) => [e.seq, e.request_id, e.agent, e.exchange?.request_headers])]);
  out.push(['journal a', (await state.journal.readInSlices({ agent: 'a' })).entries.map((e) => e.seq)]);
  out.push(['journal list', (await state.journal.list({ limit: 1 })).entries.map((e) => e.seq)]);
  await state.journal.clear();
  out.push(['journal cleared', (await state.journal.page({})).entries.length]);

  // Faults: a fault that strikes twice, every request of agent-a to web.fetch; then it is spent.
  world.parts.faults.add({
    match: { operation: 'web.fetch', agent: 'agent-a' },
    kind: 'status',
    status: 503,
    delay_ms: 0,
    count: 2,
    every: 1,
  });
  const strikes = [];
  for (const agent of ['agent-b', 'agent-a', 'agent-a', 'agent-a'])
    strikes.push((await state.faults.strike('web.fetch', agent))?.id ?? null);
  out.push(['faults', strikes, world.parts.faults.list().length, spent]);
  out.push(['refusal', state.refusal()]);
  return out;
}

describeWithRedis('the state port: memory and Redis answer alike', () => {
  const redis = useRedis();
  let store: SharedStore | undefined;
  beforeAll(async () => {
    const { config } = stageWorld({ ...OVERLAY, store: { url: redis.url, key_prefix: 'port-test' } });
    store = await connectSharedStore(config, () => {});
  }, 30_000);
  afterAll(async () => {
    await store?.close();
  });

  it('the same calls give the same decisions, replays, journal and fault strikes', async () => {
    const memoryWorld = stageWorld(OVERLAY);
    const memory = await trace(memoryWorld.state, memoryWorld, []);

    const redisWorld = stageWorld(OVERLAY);
    const spent: string[] = [];
    const shared = createRedisState(store as SharedStore, redisWorld.state, {
      config: () => redisWorld.config,
      faults: redisWorld.parts.faults,
      faultSpent: () => spent.push('announced'),
    });
    const onRedis = await trace(shared, redisWorld, spent);
    // The memory port has no one to tell: the only expected difference, stated.
    const faultsStep = onRedis.findIndex((step) => Array.isArray(step) && step[0] === 'faults');
    expect((onRedis[faultsStep] as unknown[])[3]).toEqual(['announced']);
    (onRedis[faultsStep] as unknown[])[3] = [];
    expect(onRedis).toEqual(memory);
    // And what the traces hold is what the port promises (not two equal wrong answers).
    expect(memory).toContainEqual(['idem busy', 'idempotency_key_in_use']);
    expect(memory).toContainEqual(['idem reused', 'idempotency_key_reused']);
    expect(memory).toContainEqual(['faults', [null, 'fault-1', 'fault-1', null], 0, []]);
    expect(memory).toContainEqual(['journal cleared', 0]);
  }, 60_000);
});
