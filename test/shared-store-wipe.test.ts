import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import type { GatewayConfigOverlay } from '../mock-server/config/schema.ts';
import { createSharedGateway } from '../mock-server/gateway.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';
import { type RedisProcesses, useRedisProcesses } from './support/redis-processes.ts';

const ADMIN = 'admin-key-for-tests';
type Shared = Awaited<ReturnType<typeof createSharedGateway>>;
const API_KEYS = ['ak_early_7c3e9a1b5d2f', 'ak_verified_2b8d4f6a1c9e', 'ak_allowlisted_9e5a3c7b1d4f'];
let env: RedisProcesses;
let prefixes = 0;

/** A config without a signing secret (each store draws one) for instances sharing the test's Redis. */
function configFile(): { file: string; prefix: string } {
  const prefix = `w${++prefixes}`;
  const file = join(env.dir, `config-${prefix}.json`);
  const config = {
    rate_limits: { rules: [], concurrency: { per_agent: null } },
    store: { url: env.redis.url, key_prefix: prefix, lease_seconds: 1, timeout_ms: 10_000 },
  };
  writeFileSync(file, JSON.stringify(config));
  return { file, prefix };
}
const serveArgs = (file: string, ...more: string[]) => ['--config', file, '--admin-key', ADMIN, ...more];
/** `agent-gateway serve` on that config, stopped after the tests (it joins `env.started`). */
async function serve(file: string, ...more: string[]) {
  const instance = await spawnServe(serveArgs(file, ...more), { timeoutMs: 60_000 });
  env.started.push(instance);
  return instance;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  status: number;
  code?: string;
  reason?: string;
}
const outcomeOf = async (answer: Response): Promise<Outcome> => {
  const body = (await answer.json().catch(() => ({}))) as { code?: string; reason?: string };
  return { status: answer.status, code: body.code, reason: body.reason };
};
const mintAt = async (url: string, apiKey: string): Promise<string | undefined> => {
  const answer = await fetch(`${url}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  }).catch(() => undefined);
  if (answer?.status !== 200) return undefined;
  return ((await answer.json()) as { token: string }).token;
};
const whoamiAt = (url: string, token: string) =>
  fetch(`${url}/v1/whoami`, { headers: { 'x-agent-identity': token } })
    .then(outcomeOf)
    .catch((): Outcome => ({ status: 0 }));

/** One instance on a fresh config, a token it minted and serves (200), and a client of the store. */
async function oneServing() {
  const { file, prefix } = configFile();
  const a = await serve(file);
  const token = (await mintAt(a.url, API_KEYS[0] as string)) as string;
  expect((await whoamiAt(a.url, token)).status).toBe(200);
  return { file, prefix, a, token, client: new Redis(env.redis.url) };
}

/** Waits (generously) until a condition holds. */
async function until(what: string, condition: () => Promise<boolean> | boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

/** Resolves once an instance holds the fleet's secret: it found it at start, or adopted it after drawing. */
const settled = (instance: ServeProcess) =>
  until(
    "the newcomer takes the running instances' secret",
    () => !/this instance drew one/.test(instance.output()) || /adopted theirs/.test(instance.output()),
  );

/** Stops a process (SIGSTOP) for the length of `during`, then lets it go on (SIGCONT), whatever happens. */
async function stalled<T>(instance: ServeProcess, during: () => Promise<T>): Promise<T> {
  const pid = instance.child.pid as number;
  process.kill(pid, 'SIGSTOP');
  try {
    return await during();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

describeWithRedis('a store that loses its data: no split brain (real processes)', () => {
  env = useRedisProcesses('agw-wipe-');

  it('kill -9 and a restart without persistence, FLUSHALL, a late instance and a respawned worker under load: no valid token is ever refused as bad_signature', async () => {
    const { file, prefix } = configFile();
    const a = await serve(file);
    const b = await serve(file, '--workers', '2');
    const urls = [a.url, b.url];
    const tokens: string[] = [];
    const outcomes: Outcome[] = [];
    let running = true;
    // Load: tokens minted on any instance, used on any instance, all through the events below.
    const load = (async () => {
      for (let i = 0; running; i++) {
        const url = urls[i % urls.length] as string;
        if (i % 5 === 0) {
          const token = await mintAt(url, API_KEYS[i % API_KEYS.length] as string);
          if (token) tokens.push(token);
        }
        if (tokens.length === 0) {
          await sleep(10);
          continue;
        }
        const token = tokens[(i * 7) % tokens.length] as string;
        outcomes.push(await whoamiAt(urls[(i + 1) % urls.length] as string, token));
      }
    })();
    const served = () => outcomes.filter((o) => o.status === 200).length;
    const servedAfter = async (n: number) => until(`${n} more answers are 200`, () => served() >= n);

    await servedAfter(50);
    // 1. Redis killed and started again, empty.
    await env.redis.stop();
    await sleep(200);
    await env.redis.restart();
    await servedAfter(served() + 100);
    // 2. FLUSHALL under load, and an instance started right after it.
    const client = new Redis(env.redis.url);
    await client.flushall();
    const c = await serve(file);
    // Should A and B have been slower than C's start grace, C drew a secret of its own: it takes theirs
    // (older) once they write it back, as long as it signed nothing; so it gets load only once it agrees.
    await settled(c);
    urls.push(c.url);
    await servedAfter(served() + 100);
    // 3. A worker of B killed: the primary starts another, which joins after the wipes.
    const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(b.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
    expect(workers.length).toBe(2);
    process.kill(workers[0] as number, 'SIGKILL');
    await until('the worker is replaced', () => /starting another/.test(b.output()));
    await client.flushall();
    await servedAfter(served() + 200);
    running = false;
    await load;

    // Every token minted, on every instance: valid (once the store answers), never a bad signature.
    for (const url of urls)
      for (const token of tokens.slice(-20)) {
        let outcome = await whoamiAt(url, token);
        await until('the store answers', async () => {
          if (outcome.status !== 503) return true;
          outcome = await whoamiAt(url, token);
          return false;
        });
        outcomes.push(outcome);
        expect(outcome.status).toBe(200);
      }
    const refusedSignatures = outcomes.filter((o) => o.reason === 'bad_signature');
    expect(refusedSignatures).toEqual([]);
    expect(outcomes.filter((o) => o.code === 'state_store_conflict')).toEqual([]);
    // Nothing but 200 and the store's 503 (or a connection cut by the killed worker).
    expect(outcomes.filter((o) => ![0, 200, 503].includes(o.status))).toEqual([]);
    // Each wipe was noticed and said, with what was lost.
    for (const instance of [a, b]) expect(instance.output()).toMatch(/was emptied .*lost: the journal/);
    // One secret in the store, the one every instance signs with.
    expect(await client.get(`${prefix}:signing_secret`)).toBeTruthy();
    client.disconnect();
  }, 240_000);

  it("the running instance stalled (SIGSTOP) across a wipe and a newcomer's start: the newcomer gives way, no bad_signature, no lasting 503", async () => {
    const { file, prefix, a, token: before, client } = await oneServing();
    // A cannot write its secret back while stopped, however long C's grace: C draws its own, for sure.
    const c = await stalled(a, async () => {
      await client.flushall();
      return serve(file);
    });
    expect(c.output()).toMatch(/held no signing secret .*this instance drew one/);
    // A wakes, finds a secret drawn after its own and writes its own back; C, having signed nothing, adopts it.
    await until("the newcomer adopts the running instance's secret", () => /adopted theirs/.test(c.output()));
    const outcomes: Outcome[] = [];
    const minted = (await mintAt(c.url, API_KEYS[1] as string)) as string;
    expect(minted).toBeTruthy();
    for (const url of [a.url, c.url])
      for (const token of [before, minted]) outcomes.push(await whoamiAt(url, token));
    expect(outcomes.filter((o) => o.reason === 'bad_signature')).toEqual([]);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 200]);
    // The older instance never refused: it kept its secret and served throughout.
    expect(a.output()).not.toMatch(/state_store_conflict/);
    expect(c.output()).not.toMatch(/state_store_conflict/);
    expect((await client.get(`${prefix}:signing_secret_drawn`))?.split(' ')[1]).toBeTruthy();
    client.disconnect();
  }, 120_000);

  it('a newcomer that signed tokens with its own secret before the stalled instance woke: it refuses (503), the older one keeps serving', async () => {
    const { file } = configFile();
    const a = await serve(file);
    const before = (await mintAt(a.url, API_KEYS[0] as string)) as string;
    const client = new Redis(env.redis.url);
    const { c, minted } = await stalled(a, async () => {
      await client.flushall();
      const newcomer = await serve(file);
      // Signed with the newcomer's own secret while A is stopped: it can no longer give that secret up.
      return { c: newcomer, minted: (await mintAt(newcomer.url, API_KEYS[1] as string)) as string };
    });
    expect(minted).toBeTruthy();
    let outcome: Outcome = { status: 0 };
    await until('the newcomer refuses', async () => {
      outcome = await whoamiAt(c.url, minted);
      return outcome.status !== 200;
    });
    expect(outcome).toMatchObject({ status: 503, code: 'state_store_conflict' });
    expect(c.output()).not.toMatch(/adopted theirs/);
    // One secret signs and verifies wherever anything is answered: A's, and A never refuses.
    expect(await whoamiAt(a.url, before)).toMatchObject({ status: 200 });
    expect((await whoamiAt(c.url, before)).status).toBe(503);
    expect(a.output()).not.toMatch(/holds another signing secret/);
    client.disconnect();
  }, 120_000);

  it('a store that holds another signing secret than a running instance: 503 state_store_conflict, loudly, until they agree again', async () => {
    const { prefix, a, token, client } = await oneServing();
    const key = `${prefix}:signing_secret`;
    const held = (await client.get(key)) as string;
    await client.set(key, 'a-secret-drawn-by-another-group-of-instances');
    let outcome: Outcome = { status: 0 };
    await until('the instance notices', async () => {
      outcome = await whoamiAt(a.url, token);
      return outcome.status !== 200;
    });
    expect(outcome).toMatchObject({ status: 503, code: 'state_store_conflict' });
    const minting = await fetch(`${a.url}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: API_KEYS[0] }),
    });
    expect(await outcomeOf(minting)).toMatchObject({ status: 503, code: 'state_store_conflict' });
    expect(a.output()).toMatch(/holds another signing secret than this instance/);
    await client.set(key, held);
    await until('the instance agrees again', async () => (await whoamiAt(a.url, token)).status === 200);
    client.disconnect();
  }, 120_000);
});

describeWithRedis('a store with persistence (appendonly yes): what a restart keeps', () => {
  const durable = useRedis({ appendonly: true });

  it('the journal and token revocations survive a kill -9 and restart of a Redis with an append-only file', async () => {
    const config = {
      rate_limits: { rules: [], concurrency: { per_agent: null } },
      store: { url: durable.url, key_prefix: 'aof', lease_seconds: 1, timeout_ms: 2000 },
    } as GatewayConfigOverlay;
    const logs: string[] = [];
    const open = () => createSharedGateway({ config, adminKey: ADMIN, log: (line) => logs.push(line) });
    const call = (g: Shared, path: string, init: RequestInit = {}) =>
      g.fetch(new Request(`http://gw.test${path}`, init));
    const first = await open();
    const revoked = first.mintToken('agent-early');
    const kept = first.mintToken('agent-verified');
    for (let i = 0; i < 5; i++)
      expect((await call(first, '/v1/whoami', { headers: { 'x-agent-identity': kept } })).status).toBe(200);
    expect(
      (
        await call(first, '/__admin/agents/agent-early/revoke-tokens', {
          method: 'POST',
          headers: { 'x-admin-key': ADMIN },
        })
      ).status,
    ).toBe(200);
    const journalOf = async (g: Shared) =>
      (
        (await (await call(g, '/__admin/journal', { headers: { 'x-admin-key': ADMIN } })).json()) as {
          entries: { agent?: string; operation: string }[];
        }
      ).entries;
    const before = (await journalOf(first)).filter((e) => e.operation === 'whoami');
    expect(before).toHaveLength(5);
    await first.close();

    await durable.stop();
    await durable.restart();
    // A new instance knows nothing but what the store kept.
    const second = await open();
    try {
      const after = (await journalOf(second)).filter((e) => e.operation === 'whoami');
      expect(after).toEqual(before);
      const refused = await call(second, '/v1/whoami', { headers: { 'x-agent-identity': revoked } });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { reason: string }).reason).toBe('revoked');
      expect((await call(second, '/v1/whoami', { headers: { 'x-agent-identity': kept } })).status).toBe(200);
      expect(logs.filter((line) => /was emptied/.test(line))).toEqual([]);
    } finally {
      await second.close();
    }
  }, 60_000);
});
