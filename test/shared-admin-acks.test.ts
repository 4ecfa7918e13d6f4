import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { type AdminAnswer, adminCall } from './support/admin-call.ts';
import { describeWithRedis } from './support/redis.ts';
import { type RedisProcesses, useRedisProcesses } from './support/redis-processes.ts';

/*
 * Acknowledged means applied (docs/operators.md, "What survives what"): admin changes sent without pause
 * through two instances (one with two workers) while Redis is killed (-9) and restarted empty, flushed,
 * paused (SIGSTOP), its subscribers' connections killed, a worker killed, Redis restarted from a snapshot
 * older than the last changes, and an instance paused across a wipe with a change waiting in it. Every
 * change answered 2xx is counted and, at the end, found on every instance and worker; a 503 is repeated
 * until it is answered. Nothing is timed: the faults come in a fixed order, each after the writers have had
 * changes acknowledged since the previous one, and the end state is polled until it stops changing.
 *
 * The writers never give up on a call: a call abandoned by its client has no known outcome, and an
 * instance paused with it in its socket applies it when it resumes, after changes acknowledged meanwhile
 * (docs/operators.md). So a paused instance gets no new calls, and the calls waiting in it are answered
 * once it resumes; a status 0 is only a connection reset by a process that died (a killed worker).
 */

const ADMIN = 'admin-key-for-tests';
const LANES = 4;
/** Reads in a row that must show every acknowledged change (fresh connections alternate between workers). */
const CLEAN_READS = 6;
let env: RedisProcesses;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Calls under way per instance URL (an instance is paused only once none is). */
const inFlight = new Map<string, number>();
const moveInFlight = (url: string, by: number) => inFlight.set(url, (inFlight.get(url) ?? 0) + by);
/** Far beyond any answer: a call unanswered this long fails the test (it is never abandoned and repeated). */
const NO_ANSWER_MS = 300_000;

/**
 * An admin call on a fresh connection (with workers, either may answer), waited for until it is answered;
 * a connection refused or reset (its process killed) is status 0.
 */
async function admin(url: string, method: string, path: string, body?: unknown): Promise<AdminAnswer> {
  moveInFlight(url, 1);
  try {
    return await adminCall(url, ADMIN, method, path, body, AbortSignal.timeout(NO_ANSWER_MS));
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      throw new Error(`${method} ${url}${path}: no answer in ${NO_ANSWER_MS / 1000} s`);
    return { status: 0, body: {} };
  } finally {
    moveInFlight(url, -1);
  }
}

interface AgentView {
  id: string;
  disabled: boolean;
  allowlist: string[];
  token_generation: number;
}

/** What the writers were told was applied: the last acknowledged value of everything they changed. */
interface Acked {
  agents: Map<string, { disabled: boolean; allowlist: string[]; generation: number }>;
  created: Set<string>;
  latency: number;
  count: number;
  refusals: Map<number, number>;
}

describeWithRedis(
  'acknowledged admin changes survive Redis loss, pauses, lost subscribers and killed workers (real processes)',
  () => {
    env = useRedisProcesses('agw-acks-');

    it('every change answered 2xx is in force on every instance and worker at the end: zero lost', async () => {
      const file = join(env.dir, 'acks.json');
      writeFileSync(
        file,
        JSON.stringify({
          rate_limits: { rules: [], concurrency: { per_agent: null } },
          // A short timeout, so a paused Redis turns into 503s rather than long waits.
          store: { url: env.redis.url, key_prefix: 'acks', lease_seconds: 1, timeout_ms: 1_000 },
        }),
      );
      const serve = async (...more: string[]): Promise<ServeProcess> => {
        const server = await spawnServe(['--config', file, '--admin-key', ADMIN, ...more], {
          timeoutMs: 60_000,
        });
        env.started.push(server);
        return server;
      };
      const a = await serve();
      const b = await serve('--workers', '2');
      const urls = [a.url, b.url];
      /** Instances taking no new calls (paused). */
      const paused = new Set<string>();
      const live = () => urls.filter((url) => !paused.has(url));
      const acked: Acked = {
        agents: new Map(),
        created: new Set(),
        latency: 0,
        count: 0,
        refusals: new Map(),
      };

      /**
       * Sends one change until it is acknowledged (2xx, or `alsoDone`), attempt n to `route(n)`; returns
       * the acknowledging answer.
       */
      const until2xx = async (
        route: (attempt: number) => string,
        method: string,
        path: string,
        body?: unknown,
        alsoDone?: number,
      ) => {
        for (let attempt = 0; ; attempt++) {
          const answer = await admin(route(attempt), method, path, body);
          if ((answer.status >= 200 && answer.status < 300) || answer.status === alsoDone) {
            acked.count += 1;
            return answer;
          }
          acked.refusals.set(answer.status, (acked.refusals.get(answer.status) ?? 0) + 1);
          // Only the store's 503 (with Retry-After) or a connection to a killed worker; never a 404 or a 500.
          expect([0, 503], `${method} ${path}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
          await sleep(50);
        }
      };
      /** Lane n's attempts at its step: the instances taking calls in turn. */
      const spread = (n: number, step: number) => (attempt: number) => {
        const open = live();
        return open[(n + step + attempt) % open.length] as string;
      };

      // Each lane owns one agent and changes it in turn (disable/enable, allowlist, revoke), creates agents
      // of its own, and moves a tool setting; each answer is checked against what was asked.
      let stop = false;
      let progress = 0;
      const lane = async (n: number) => {
        const id = `lane-${n}`;
        await until2xx(spread(n, 0), 'POST', '/agents', { id }, 409);
        const mine = { disabled: false, allowlist: [] as string[], generation: 0 };
        acked.agents.set(id, mine);
        for (let step = 1; !stop; step++) {
          const kind = step % 4;
          const route = spread(n, step);
          if (kind === 0) {
            const disabled = !mine.disabled;
            const answer = await until2xx(route, 'PATCH', `/agents/${id}`, { disabled });
            expect(answer.body.disabled, JSON.stringify(answer)).toBe(disabled);
            mine.disabled = disabled;
          } else if (kind === 1) {
            const allowlist = step % 8 === 1 ? ['web.fetch'] : ['web.search', 'web.fetch'];
            const answer = await until2xx(route, 'PATCH', `/agents/${id}`, { allowlist });
            expect(answer.body.allowlist).toEqual(allowlist);
            mine.allowlist = allowlist;
          } else if (kind === 2) {
            const answer = await until2xx(route, 'POST', `/agents/${id}/revoke-tokens`);
            const generation = answer.body.token_generation as number;
            expect(generation).toBeGreaterThan(mine.generation);
            mine.generation = generation;
          } else if (n === 0) {
            const latency = step;
            await until2xx(route, 'PATCH', '/tools/web.search', { latency_ms: latency });
            acked.latency = latency;
          } else {
            const made = `lane-${n}-made-${step}`;
            await until2xx(route, 'POST', '/agents', { id: made }, 409);
            acked.created.add(made);
          }
          progress += 1;
        }
      };
      // The agent whose change waits in a paused instance (fault 7).
      const HELD = 'held-in-pause';
      await until2xx(spread(0, 0), 'POST', '/agents', { id: HELD }, 409);
      acked.agents.set(HELD, { disabled: false, allowlist: [], generation: 0 });

      let failure: unknown;
      const lanes = Array.from({ length: LANES }, (_, n) =>
        lane(n).catch((error) => {
          failure ??= error;
          stop = true;
        }),
      );
      /** Waits until `done()` holds, failing the test if the writers failed or `what` takes minutes. */
      const until = async (done: () => boolean, what: string) => {
        const deadline = Date.now() + 120_000;
        while (!done()) {
          if (failure) throw failure;
          if (Date.now() > deadline) throw new Error(what);
          await sleep(20);
        }
      };
      /** Waits until the writers had `count` more changes acknowledged (each fault lands between changes). */
      const changesGo = async (count = 12) => {
        const target = progress + count;
        await until(() => progress >= target, 'the writers made no progress');
      };
      const client = new Redis(env.redis.url);
      const workerPids = () =>
        execFileSync('ps', ['-o', 'pid=', '--ppid', String(b.child.pid)], { encoding: 'utf8' })
          .split('\n')
          .map((line) => Number(line.trim()))
          .filter((pid) => pid > 0);
      const faults: string[] = [];
      try {
        await changesGo();
        // 1. kill -9 and a restart with nothing kept (the audit's case: changes sent as it comes back).
        client.disconnect();
        await env.redis.stop();
        await sleep(200);
        await env.redis.restart();
        await changesGo();
        faults.push('kill -9, restart empty');
        // 2. FLUSHALL.
        await client.connect().catch(() => {});
        await client.flushall();
        await changesGo();
        faults.push('FLUSHALL');
        // 3. Redis paused past the store timeout, then resumed.
        process.kill(env.redis.pid, 'SIGSTOP');
        await sleep(2_500);
        process.kill(env.redis.pid, 'SIGCONT');
        await changesGo();
        faults.push('Redis SIGSTOP, SIGCONT');
        // 4. Every subscriber's connection killed (changes then travel by the poll of the version).
        await client.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
        await changesGo();
        faults.push('CLIENT KILL TYPE pubsub');
        // 5. A worker killed: the primary starts another, which takes over the store's state.
        process.kill(workerPids()[0] as number, 'SIGKILL');
        await changesGo();
        faults.push('worker SIGKILL');
        // 6. A restart with persistence that lost the last writes: a snapshot (RDB) taken, changes acknowledged
        // after it, kill -9, and Redis starts from the snapshot (its own life, an older version). The snapshot
        // is removed after, so the later restarts are empty again.
        const dir = ((await client.call('CONFIG', 'GET', 'dir')) as string[])[1] as string;
        await client.call('SAVE');
        await changesGo();
        client.disconnect();
        await env.redis.stop();
        await env.redis.restart();
        rmSync(join(dir, 'dump.rdb'), { force: true });
        await changesGo();
        faults.push('kill -9, restart from an older snapshot');
        // 7. Instance A paused across a wipe, holding a change sent to it just after the pause: it comes back
        // holding an older copy, which must not win, then answers that change. New calls go to B meanwhile.
        paused.add(a.url);
        await until(() => (inFlight.get(a.url) ?? 0) === 0, 'calls to instance A stayed unanswered');
        process.kill(a.child.pid as number, 'SIGSTOP');
        let held: Promise<AdminAnswer> | undefined;
        try {
          const allowlist = ['web.search'];
          held = until2xx(
            (attempt) => (attempt === 0 ? a.url : (live()[0] as string)),
            'PATCH',
            `/agents/${HELD}`,
            { allowlist },
          ).then((answer) => {
            expect(answer.body.allowlist).toEqual(allowlist);
            (acked.agents.get(HELD) as { allowlist: string[] }).allowlist = allowlist;
            return answer;
          });
          await changesGo(4);
          await env.redis.stop();
          await env.redis.restart();
          await changesGo(8);
        } finally {
          process.kill(a.child.pid as number, 'SIGCONT');
          paused.delete(a.url);
        }
        await held;
        await changesGo();
        faults.push('instance SIGSTOP across a wipe, a change waiting in it');
        // 8. Once more a kill -9 and restart, then changes with nothing in the way.
        await env.redis.stop();
        await env.redis.restart();
        await changesGo();
        faults.push('kill -9, restart empty');
      } finally {
        stop = true;
        await Promise.all(lanes);
        client.disconnect();
      }
      if (failure) throw failure;
      // Every acknowledged change is in force everywhere: both instances, both workers of B (fresh
      // connections alternate between them), several reads in a row.
      const matches = (agents: AgentView[], latency: number) => {
        const byId = new Map(agents.map((agent) => [agent.id, agent]));
        const lost: string[] = [];
        for (const [id, want] of acked.agents) {
          const seen = byId.get(id);
          if (!seen) lost.push(`${id}: missing`);
          else {
            if (seen.disabled !== want.disabled)
              lost.push(`${id}: disabled ${seen.disabled}, acked ${want.disabled}`);
            if (JSON.stringify(seen.allowlist) !== JSON.stringify(want.allowlist))
              lost.push(
                `${id}: allowlist ${JSON.stringify(seen.allowlist)}, acked ${JSON.stringify(want.allowlist)}`,
              );
            if (seen.token_generation < want.generation)
              lost.push(`${id}: token_generation ${seen.token_generation}, acked ${want.generation}`);
          }
        }
        for (const id of acked.created) if (!byId.has(id)) lost.push(`${id}: created, missing`);
        if (latency !== acked.latency) lost.push(`web.search latency_ms ${latency}, acked ${acked.latency}`);
        return lost;
      };
      const view = async (url: string) => {
        const [agents, tools] = await Promise.all([
          admin(url, 'GET', '/agents'),
          admin(url, 'GET', '/tools'),
        ]);
        const search = (tools.body.tools as Record<string, { latency_ms?: number }> | undefined)?.[
          'web.search'
        ];
        return matches((agents.body.agents as AgentView[] | undefined) ?? [], search?.latency_ms ?? -1);
      };
      /**
       * Reads `url` until CLEAN_READS reads in a row (fresh connections: each of its workers) show every
       * acknowledged change. The wait is bounded by convergence, not by a time: it fails once the reads
       * have shown the same missing changes for a minute (each instance asks the store every 250 ms).
       */
      const converge = async (url: string) => {
        let clean = 0;
        let shown = '';
        let since = Date.now();
        while (clean < CLEAN_READS) {
          const lost = await view(url);
          if (lost.length === 0) {
            clean += 1;
            continue;
          }
          clean = 0;
          if (JSON.stringify(lost) !== shown) {
            shown = JSON.stringify(lost);
            since = Date.now();
          } else if (Date.now() - since > 60_000)
            expect(lost, `${url} stopped converging (after: ${faults.join('; ')})`).toEqual([]);
          await sleep(100);
        }
      };
      for (const url of urls) await converge(url);
      // Stays so, on every instance and worker.
      for (const url of urls) for (let i = 0; i < CLEAN_READS; i++) expect(await view(url), url).toEqual([]);
      // Every fault came, each felt (some changes had to be repeated), and many changes were acknowledged.
      expect(faults).toHaveLength(8);
      expect(acked.count).toBeGreaterThan(faults.length * 12);
      expect([...acked.refusals.values()].reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
      const values = acked.agents.size * 3 + acked.created.size + 1;
      console.info(
        `${acked.count} changes acknowledged (${[...acked.refusals].map(([s, n]) => `${n} x ${s}`).join(', ')} repeated); ${values} values checked on ${urls.length} instances, 3 processes: none lost`,
      );
    }, 600_000);
  },
);
