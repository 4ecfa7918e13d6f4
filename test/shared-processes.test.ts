import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { CLI_ENTRY, spawnServe } from '../dev/spawn-serve.ts';
import { CONNECTION_IDS_PER_INSTANCE } from '../mock-server/journal/journal.ts';
import { describeWithRedis } from './support/redis.ts';
import { type RedisProcesses, useRedisProcesses } from './support/redis-processes.ts';

const ADMIN = 'admin-key-for-tests';
let env: RedisProcesses;
let prefixes = 0;

/** A config file for instances sharing the test's Redis under a fresh key prefix. */
function configFile(overlay: Record<string, unknown>): string {
  const file = join(env.dir, `config-${++prefixes}.json`);
  const config = {
    ...overlay,
    store: { url: env.redis.url, key_prefix: `p${prefixes}`, lease_seconds: 1, timeout_ms: 10_000 },
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const serveArgs = (file: string, ...more: string[]) => ['--config', file, '--admin-key', ADMIN, ...more];
const mint = async (url: string, agent: string) =>
  (
    (await (
      await fetch(`${url}/__admin/agents/${agent}/tokens`, {
        method: 'POST',
        headers: { 'x-admin-key': ADMIN },
      })
    ).json()) as { token: string }
  ).token;
const whoami = (url: string, token: string) =>
  fetch(`${url}/v1/whoami`, { headers: { 'x-agent-identity': token } });

describeWithRedis('serve processes sharing Redis (--store, --workers)', () => {
  env = useRedisProcesses('agw-shared-');
  const started = env.started;

  it('serve --workers 2 without a shared store is refused, saying why', () => {
    const run = spawnSync(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', '--workers', '2'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, AGENT_GATEWAY_STORE: '' },
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--workers 2 needs a shared store \(--store redis:\/\/HOST:PORT/);
    expect(run.stderr).toMatch(/every worker would admit the full rate limit/);
  }, 60_000);

  it('serve --workers 2 --store: both workers serve the port, one limit, one journal', async () => {
    const file = configFile({
      rate_limits: {
        rules: [
          { name: 'fleet', scope: 'agent', algorithm: 'sliding_window', limit: 25, window_seconds: 3600 },
        ],
        concurrency: { per_agent: null },
      },
    });
    const server = await spawnServe(serveArgs(file, '--workers', '2'), { timeoutMs: 60_000 });
    started.push(server);
    expect(server.output()).toMatch(/workers: 2 processes sharing the port/);
    const token = await mint(server.url, 'agent-verified');
    const answers = await Promise.all(Array.from({ length: 300 }, () => whoami(server.url, token)));
    // Counted by status, with the first other answer's body: a failure shows every status seen and why.
    const counts: Record<number, number> = {};
    for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
    const other = answers.find((a) => a.status !== 200 && a.status !== 429);
    expect({ counts, other: await other?.text() }).toEqual({
      counts: { 200: 25, 429: 275 },
      other: undefined,
    });
    const journalOf = async () =>
      (
        (await (
          await fetch(`${server.url}/__admin/journal?agent=agent-verified&limit=100000`, {
            headers: { 'x-admin-key': ADMIN },
          })
        ).json()) as { entries: { connection: number }[] }
      ).entries;
    // Each worker writes an entry to the store once its answer is out, on its own connection to Redis: the
    // last few may land just after the client has its answers. Every one of the 300, once they have.
    let entries = await journalOf();
    for (const deadline = Date.now() + 10_000; entries.length < 300 && Date.now() < deadline; )
      entries = await journalOf();
    expect(entries).toHaveLength(300);
    // Connection ids are numbered apart per instance: both workers answer. The workers accept connections
    // themselves (the kernel picks one), so more requests go out on new connections until both have.
    const workersIn = (held: { connection: number }[]) =>
      new Set(held.map((e) => Math.floor(e.connection / CONNECTION_IDS_PER_INSTANCE))).size;
    const deadline = Date.now() + 30_000;
    while (workersIn(entries) < 2 && Date.now() < deadline) {
      const more = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${server.url}/v1/whoami`, { headers: { 'x-agent-identity': token, connection: 'close' } }),
        ),
      );
      // The limit is spent: every one refused, whichever worker.
      expect(more.map((a) => a.status)).toEqual(more.map(() => 429));
      entries = await journalOf();
    }
    expect(workersIn(entries)).toBe(2);
  }, 90_000);

  it('an instance killed mid-burst: its concurrency slots are released once its leases expire', async () => {
    const file = configFile({
      rate_limits: { rules: [], concurrency: { per_agent: 3 } },
      tools: { 'web.search': { latency_ms: 60_000 } },
    });
    const [a, b] = await Promise.all([spawnServe(serveArgs(file)), spawnServe(serveArgs(file))]);
    started.push(a, b);
    const token = await mint(a.url, 'agent-verified');
    const client = new Redis(env.redis.url);
    // Three searches hang on A (a minute of tool latency): the agent's three slots are taken.
    const hanging = Array.from({ length: 3 }, () =>
      fetch(`${a.url}/v1/web/search`, {
        method: 'POST',
        headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'slow' }),
      }).catch(() => undefined),
    );
    // Probing B before all three hold their slots could take one itself: wait for them in the store.
    const leases = `p${prefixes}:lease:agent-verified`;
    const deadline = Date.now() + 30_000;
    while ((await client.zcard(leases)) < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const refused = await whoami(b.url, token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { reason: string }).reason).toBe('concurrency');
    // Killed without a chance to give its slots back: they expire (lease 1 s) and B admits again.
    a.child.kill('SIGKILL');
    started.splice(started.indexOf(a), 1);
    await Promise.all(hanging);
    let after = await whoami(b.url, token);
    const until = Date.now() + 30_000;
    while (after.status === 429 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      after = await whoami(b.url, token);
    }
    expect(after.status).toBe(200);
    client.disconnect();
  }, 90_000);
});
