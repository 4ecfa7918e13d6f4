import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { type AdminAnswer, adminCall } from './support/admin-call.ts';
import { describeWithRedis } from './support/redis.ts';
import { useRedisProcesses } from './support/redis-processes.ts';

/*
 * Redis restarted from a snapshot older than an acknowledged change, then changed past the version the
 * answering instance read (docs/operators.md, "The rule for admin changes"): the store is in the same life
 * (its seed was in the snapshot) and its version is higher than the instance's, yet it lacks the change.
 * The instance that holds it (paused meanwhile, so it reads only once the store has moved past it) must
 * tell this from newer changes by the store's history and merge its copy back. Real processes; nothing timed:
 * the end state is read until it stops changing.
 */

const ADMIN = 'admin-key-for-tests';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const admin = (url: string, method: string, path: string, body?: unknown) =>
  adminCall(url, ADMIN, method, path, body);
/** Repeats a change answered 503 (the store restarting) until it is answered otherwise. */
async function answered(url: string, method: string, path: string, body?: unknown): Promise<AdminAnswer> {
  for (;;) {
    const answer = await admin(url, method, path, body);
    if (answer.status !== 503) return answer;
    await sleep(50);
  }
}

describeWithRedis('an acknowledged change survives a restart from an older snapshot (real processes)', () => {
  const env = useRedisProcesses('agw-restore-');

  it('the instance holding it merges it back although the store moved past its version', async () => {
    const file = join(env.dir, 'restore.json');
    writeFileSync(
      file,
      JSON.stringify({
        rate_limits: { rules: [], concurrency: { per_agent: null } },
        store: { url: env.redis.url, key_prefix: 'restore', lease_seconds: 1, timeout_ms: 1_000 },
      }),
    );
    const serve = async (): Promise<ServeProcess> => {
      const server = await spawnServe(['--config', file, '--admin-key', ADMIN], { timeoutMs: 60_000 });
      env.started.push(server);
      return server;
    };
    const client = new Redis(env.redis.url);
    const a = await serve();
    try {
      expect((await answered(a.url, 'POST', '/agents', { id: 'kept' })).status).toBe(201);
      expect((await answered(a.url, 'POST', '/agents', { id: 'other' })).status).toBe(201);
      // The snapshot, then the change it lacks, acknowledged by A; A is paused before anything else reads.
      const dir = ((await client.call('CONFIG', 'GET', 'dir')) as string[])[1] as string;
      await client.call('SAVE');
      const change = await answered(a.url, 'PATCH', '/agents/kept', { disabled: true });
      expect(change.status).toBe(200);
      const versionRead = Number(await client.get('restore:admin:version'));
      process.kill(a.child.pid as number, 'SIGSTOP');
      let b: ServeProcess;
      try {
        client.disconnect();
        await env.redis.stop();
        await env.redis.restart();
        rmSync(join(dir, 'dump.rdb'), { force: true });
        await client.connect();
        expect(Number(await client.get('restore:admin:version'))).toBeLessThan(versionRead);
        // B starts on the restored store and changes another agent until the store passes A's version.
        b = await serve();
        for (let n = 0; Number(await client.get('restore:admin:version')) <= versionRead; n++)
          expect((await answered(b.url, 'PATCH', '/agents/other', { name: `other-${n}` })).status).toBe(200);
        const kept = (await admin(b.url, 'GET', '/agents/kept')).body;
        expect(kept.disabled, 'the restored store lacks the change (else this test proves nothing)').toBe(
          false,
        );
      } finally {
        process.kill(a.child.pid as number, 'SIGCONT');
      }
      // A resumes, reads a store past its version: the history says it is not the one A read.
      for (const url of [a.url, b.url]) {
        let seen: unknown;
        let since = Date.now();
        for (;;) {
          const now = (await admin(url, 'GET', '/agents/kept')).body.disabled;
          if (now === true) break;
          if (now !== seen) {
            seen = now;
            since = Date.now();
          } else if (Date.now() - since > 30_000)
            expect(now, `${url}: the acknowledged change was lost`).toBe(true);
          await sleep(100);
        }
      }
    } finally {
      client.disconnect();
    }
  }, 240_000);
});
