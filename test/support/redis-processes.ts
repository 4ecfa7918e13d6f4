import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { ServeProcess } from '../../dev/spawn-serve.ts';
import { type RedisProcess, useRedis } from './redis.ts';

/** A Redis of the test's own, a scratch folder for config files, and the serve processes started on them. */
export interface RedisProcesses {
  redis: RedisProcess;
  dir: string;
  /** Every serve process a test starts goes here, so the suite stops it even when the test fails. */
  started: ServeProcess[];
}

/**
 * Call inside a `describeWithRedis` block: starts redis-server and a scratch folder before the block's
 * tests, and after them stops every process in `started`, removes the folder, then stops Redis.
 */
export function useRedisProcesses(scratchPrefix: string): RedisProcesses {
  // Registered first, so its afterAll runs last (vitest runs after-hooks as a stack): Redis outlives the
  // processes on it.
  const fixture: RedisProcesses = { redis: useRedis(), dir: '', started: [] };
  beforeAll(() => {
    fixture.dir = mkdtempSync(join(tmpdir(), scratchPrefix));
  });
  afterAll(async () => {
    await Promise.all(fixture.started.map((s) => s.stop()));
    if (fixture.dir) rmSync(fixture.dir, { recursive: true, force: true });
  }, 60_000);
  return fixture;
}
