/**
 * How vitest schedules this project's files (vitest.config.ts): how many at a time, and in what order.
 *
 * How many: many of the slow files wait (on an agent's real Retry-After and backoff sleeps, on child
 * processes, on a container build) far more than they compute. On a quiet machine twice as many files as cores run at once, so those waits overlap; on a busy
 * one (a 1-minute load average of half the cores or more when the run starts) the files would only
 * compete for CPU with the machine's other work, so it stays at cores - 1 (at least 2), as before. Under
 * `npm test` the load is the one before its own stages started (MACHINE_LOAD_ENV): the stages beside
 * vitest are part of the run, not other work. Only the number of files at a time changes, never what a
 * test asserts; `--maxWorkers=N` chooses it outright.
 *
 * Order: the files known to take longest start first, so they overlap the hundreds of quick files
 * instead of running last.
 *
 * vitest orders a run by what its cache (node_modules/.vite/vitest) says of the last one: failed files
 * first, then the longest. A fresh clone has no cache, and vitest then runs the largest files first, by
 * bytes: the conformance proof files are a few lines each (the catalogues they prove live elsewhere), so
 * they would start last, after everything else had finished. Here, when any file has no cached
 * result, the files matching SLOW_FIRST come first, in its order, and then the rest in vitest's order;
 * with a complete cache, vitest's own order stands (it already starts with the slowest).
 */
import { availableParallelism, loadavg } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { MACHINE_LOAD_ENV } from './run-stages.ts';

/** Files at a time for a machine of `cores` cores at a 1-minute load average of `load`. */
export function testWorkers(cores: number, load: number): number {
  return load < cores / 2 ? 2 * cores : Math.max(2, cores - 1);
}

/**
 * The load the schedule goes by: the one `npm test` measured before its stages began (MACHINE_LOAD_ENV,
 * dev/run-stages.ts), or else the 1-minute load average now (vitest run alone).
 */
export function machineLoad(
  env: NodeJS.ProcessEnv = process.env,
  now: () => number = () => loadavg()[0] ?? 0,
) {
  const given = env[MACHINE_LOAD_ENV];
  const load = given === undefined || given.trim() === '' ? Number.NaN : Number(given);
  return Number.isFinite(load) && load >= 0 ? load : now();
}

/** Files at a time for this machine, now. */
export const workersNow = () => testWorkers(availableParallelism(), machineLoad());

/**
 * Test files that take minutes (waits, a container build) or tens of seconds of CPU (the proof catalogues,
 * on a virtual clock), longest first.
 */
export const SLOW_FIRST: readonly RegExp[] = [
  /^test\/client-report-differential\.test\.ts$/,
  /^test\/container-image\.test\.ts$/,
  /^test\/suite-proof-(faulty|valid|held-out|paced)\.test\.ts$/,
  /^test\/shared-admin-acks\.test\.ts$/,
];

/** Where a file goes: its index in SLOW_FIRST, or after all of them. */
const slowRank = (file: string) => {
  const rank = SLOW_FIRST.findIndex((pattern) => pattern.test(file));
  return rank === -1 ? SLOW_FIRST.length : rank;
};

/** `files` (paths relative to the root) with the slow ones first; otherwise in the order given. */
export const slowFirst = <T>(files: readonly T[], path: (file: T) => string): T[] =>
  [...files].sort((a, b) => slowRank(path(a)) - slowRank(path(b)));

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    if (files.every((spec) => this.ctx.cache.getTestSpecificationResult(spec))) return ordered;
    return slowFirst(ordered, (spec) =>
      relative(spec.project.config.root, spec.moduleId).replaceAll('\\', '/'),
    );
  }
}
