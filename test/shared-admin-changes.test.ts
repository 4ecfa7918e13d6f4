import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { CONNECTION_IDS_PER_INSTANCE } from '../mock-server/journal/journal.ts';
import { adminCall } from './support/admin-call.ts';
import { describeWithRedis } from './support/redis.ts';
import { type RedisProcesses, useRedisProcesses } from './support/redis-processes.ts';

/*
 * No admin change is lost on any number of instances or workers (docs/operators.md, "Several instances"):
 * changes made at the same time through different `serve` processes on one Redis are all kept, on all of
 * them, and a disable takes effect everywhere and stays. Waits poll with a deadline; nothing is timed.
 */

const ADMIN = 'admin-key-for-tests';
let env: RedisProcesses;
let prefixes = 0;
let batches = 0;

function configFile(): string {
  const file = join(env.dir, `admin-${++prefixes}.json`);
  const config = {
    // No limits in the way: the tests count admin changes, not requests.
    rate_limits: { rules: [], concurrency: { per_agent: null } },
    store: { url: env.redis.url, key_prefix: `adm${prefixes}`, lease_seconds: 1, timeout_ms: 10_000 },
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}
const serveArgs = (file: string, ...more: string[]) => ['--config', file, '--admin-key', ADMIN, ...more];

/** An admin call on a fresh connection (with --workers, each may reach either worker). */
const admin = (url: string, method: string, path: string, body?: unknown) =>
  adminCall(url, ADMIN, method, path, body);
const agentIds = async (url: string) =>
  new Set(((await admin(url, 'GET', '/agents')).body.agents as { id: string }[]).map((a) => a.id));
const whoami = async (url: string, token: string) =>
  (await fetch(`${url}/v1/whoami`, { headers: { 'x-agent-identity': token, connection: 'close' } })).status;

/** Polls `probe` until `done` holds of its result, or the deadline passes; returns the last result. */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
}

/**
 * Through `urls` at once: `count` agents created (spread over the URLs) and, meanwhile, each of `victims`
 * disabled through the next URL. Every answer must be a success.
 */
async function concurrentCreatesAndDisables(urls: string[], count: number, victims: string[]) {
  const batch = ++batches;
  const created = Array.from({ length: count }, (_, i) => `made-${batch}-${i}`);
  const answers = await Promise.all([
    ...created.map((id, i) => admin(urls[i % urls.length] as string, 'POST', '/agents', { id })),
    ...victims.map((id, i) =>
      admin(urls[(i + 1) % urls.length] as string, 'PATCH', `/agents/${id}`, { disabled: true }),
    ),
  ]);
  expect(answers.map((a) => a.status)).toEqual([...created.map(() => 201), ...victims.map(() => 200)]);
  return created;
}

describeWithRedis('admin changes through several instances on one Redis: none lost, none reverted', () => {
  env = useRedisProcesses('agw-admin-');
  const started = env.started;
  const serve = async (file: string, ...more: string[]): Promise<ServeProcess> => {
    const server = await spawnServe(serveArgs(file, ...more), { timeoutMs: 60_000 });
    started.push(server);
    return server;
  };

  it('two instances: agents created and disabled at the same time through both are all kept, on both; disabled tokens are refused everywhere and stay refused', async () => {
    const file = configFile();
    const [a, b] = [await serve(file), await serve(file)];
    const urls = [a.url, b.url];
    // Victims created first, with a token each, accepted everywhere.
    const victims = Array.from({ length: 12 }, (_, i) => `victim-${i}`);
    for (const id of victims) expect((await admin(a.url, 'POST', '/agents', { id })).status).toBe(201);
    const tokens = await Promise.all(
      victims.map(async (id) => (await admin(b.url, 'POST', `/agents/${id}/tokens`)).body.token as string),
    );
    for (const url of urls)
      for (const token of tokens)
        expect(
          await until(
            () => whoami(url, token),
            (s) => s === 200,
          ),
        ).toBe(200);
    const created = await concurrentCreatesAndDisables(urls, 60, victims);
    const expected = [...created, ...victims];
    for (const url of urls) {
      const ids = await until(
        () => agentIds(url),
        (set) => expected.every((id) => set.has(id)),
      );
      expect(expected.filter((id) => !ids.has(id))).toEqual([]);
    }
    // Every victim is disabled on both, and its token refused by both.
    for (const url of urls) {
      const refused = await until(
        async () => Promise.all(tokens.map((token) => whoami(url, token))),
        (statuses) => statuses.every((s) => s === 401),
      );
      expect(refused).toEqual(tokens.map(() => 401));
    }
    // And it stays so: later changes (more agents through both) never bring an enabled victim back.
    await concurrentCreatesAndDisables(urls, 20, []);
    for (const url of urls) {
      const agents = (await admin(url, 'GET', '/agents')).body.agents as { id: string; disabled: boolean }[];
      expect(agents.filter((x) => victims.includes(x.id) && !x.disabled)).toEqual([]);
      expect(await Promise.all(tokens.map((token) => whoami(url, token)))).toEqual(tokens.map(() => 401));
    }
  }, 180_000);

  it('two instances: concurrent clock advances add up, faults armed at once all stay armed with distinct ids, tool changes to different fields both hold', async () => {
    const file = configFile();
    const [a, b] = [await serve(file), await serve(file)];
    const urls = [a.url, b.url];
    const frozen = await admin(a.url, 'POST', '/clock/set', { time: '2030-01-01T00:00:00Z', frozen: true });
    expect(frozen.status).toBe(200);
    const start = Date.parse('2030-01-01T00:00:00Z');
    const [advances, faults, tools] = await Promise.all([
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          admin(urls[i % 2] as string, 'POST', '/clock/advance', { ms: 1000 }),
        ),
      ),
      Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          admin(urls[i % 2] as string, 'POST', '/faults', {
            match: { agent: `x${i}` },
            kind: 'status',
            status: 503,
            count: 1,
          }),
        ),
      ),
      Promise.all([
        admin(a.url, 'PATCH', '/tools/web.search', { latency_ms: 7 }),
        admin(b.url, 'PATCH', '/tools/web.search', { enabled: false }),
      ]),
    ]);
    expect([...advances, ...faults, ...tools].filter((x) => x.status >= 300)).toEqual([]);
    const ids = faults.map((f) => f.body.id);
    expect(new Set(ids).size).toBe(10);
    for (const url of urls) {
      const clock = await until(
        () => admin(url, 'GET', '/clock'),
        (c) => c.body.now === start + 20_000,
      );
      expect(clock.body).toMatchObject({ now: start + 20_000, frozen: true });
      const armed = await until(
        () => admin(url, 'GET', '/faults'),
        (f) => (f.body.faults as unknown[]).length === 10,
      );
      expect(new Set((armed.body.faults as { id: string }[]).map((f) => f.id))).toEqual(new Set(ids));
      const search = await until(
        async () =>
          (
            (await admin(url, 'GET', '/tools')).body.tools as Record<
              string,
              { latency_ms?: number; enabled: boolean }
            >
          )['web.search'],
        (t) => t?.latency_ms === 7 && t?.enabled === false,
      );
      expect(search).toMatchObject({ latency_ms: 7, enabled: false });
    }
  }, 180_000);

  it('serve --workers 2: agents created and disabled at the same time through one URL are all kept, and disabled tokens are refused by both workers', async () => {
    const file = configFile();
    const server = await serve(file, '--workers', '2');
    const victims = Array.from({ length: 8 }, (_, i) => `w-victim-${i}`);
    for (const id of victims) expect((await admin(server.url, 'POST', '/agents', { id })).status).toBe(201);
    const tokens = await Promise.all(
      victims.map(
        async (id) => (await admin(server.url, 'POST', `/agents/${id}/tokens`)).body.token as string,
      ),
    );
    const created = await concurrentCreatesAndDisables([server.url], 40, victims);
    const expected = [...created, ...victims];
    // Every answer on fresh connections (either worker) lists them all, several times in a row.
    for (let i = 0; i < 6; i++) {
      const ids = await until(
        () => agentIds(server.url),
        (set) => expected.every((id) => set.has(id)),
      );
      expect(expected.filter((id) => !ids.has(id))).toEqual([]);
    }
    const statuses = await until(
      async () =>
        Promise.all(tokens.flatMap((token) => [whoami(server.url, token), whoami(server.url, token)])),
      (all) => all.every((s) => s === 401),
    );
    expect(statuses.every((s) => s === 401)).toBe(true);
    // Both workers refuse them: more requests on fresh connections (the kernel picks the worker) until the
    // journal shows refusals from both (connection ids are numbered apart per worker); every one a 401.
    const workersRefusing = async () => {
      const journal = (await admin(server.url, 'GET', '/journal?limit=100000')).body.entries as {
        agent?: string;
        status: number;
        connection: number;
      }[];
      const refusals = journal.filter((e) => victims.includes(e.agent ?? '') && e.status === 401);
      return new Set(refusals.map((e) => Math.floor(e.connection / CONNECTION_IDS_PER_INSTANCE))).size;
    };
    const later: number[] = [];
    const workers = await until(
      async () => {
        later.push(...(await Promise.all(tokens.map((token) => whoami(server.url, token)))));
        return workersRefusing();
      },
      (count) => count === 2,
    );
    expect(later.filter((s) => s !== 401)).toEqual([]);
    expect(workers).toBe(2);
  }, 180_000);
});
