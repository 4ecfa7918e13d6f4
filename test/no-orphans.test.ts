import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

/*
 * No server outlives the process that started it through the testing helper (`spawnServe`, which runs the
 * CLI with --exit-with-stdin on a pipe it holds), however that process ends: a runner that starts a gateway
 * and a proxy is ended by SIGKILL, SIGTERM or a crash, and both must be gone within a bound (generous, for
 * a loaded machine; typically about a second). Nothing else is timed.
 */

const BOUND_MS = 30_000;

const RUNNER = `
import { spawnServe } from './dev/spawn-serve.ts';
const gateway = await spawnServe(['--admin-key', 'admin-key-for-tests'], { timeoutMs: 120_000 });
const proxy = await spawnServe(['--target', gateway.url], { command: 'proxy', timeoutMs: 120_000 });
process.stdout.write(JSON.stringify([gateway.child.pid, proxy.child.pid]) + '\\n');
if (process.argv.includes('crash')) setImmediate(() => { throw new Error('the runner crashed'); });
else setInterval(() => {}, 1000);
`;

/** Whether a process runs (a zombie left unreaped by its new parent counts as ended). */
function alive(pid: number): boolean {
  try {
    return (readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop() ?? '').trim()[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Starts the runner; resolves with it and the process ids of the servers it started. */
function startRunner(...args: string[]): Promise<{ runner: ChildProcess; pids: number[] }> {
  const runner = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', RUNNER, '--', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    runner.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^\[.*\]$/m.exec(output)?.[0];
      if (line) resolve({ runner, pids: JSON.parse(line) as number[] });
    });
    runner.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    runner.once('exit', (code, signal) =>
      reject(new Error(`the runner ended (${signal ?? code}):\n${output}`)),
    );
  });
}

/** Polls until none of `pids` runs or the bound passes; ends (SIGKILL) and returns those still running. */
async function leftAfter(pids: number[]): Promise<number[]> {
  const deadline = Date.now() + BOUND_MS;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const left = pids.filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return left;
}

const exited = (runner: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (runner.exitCode !== null || runner.signalCode !== null) resolve();
    else runner.once('exit', () => resolve());
  });

for (const how of ['SIGKILL', 'SIGTERM', 'crash'] as const) {
  it.skipIf(process.platform === 'win32')(
    `servers started through spawnServe end when their starter ends (${how})`,
    async () => {
      const { runner, pids } = await startRunner(...(how === 'crash' ? ['crash'] : []));
      expect(pids).toHaveLength(2);
      if (how !== 'crash') {
        expect(pids.every(alive)).toBe(true);
        runner.kill(how);
      }
      await exited(runner);
      expect(await leftAfter(pids)).toEqual([]);
    },
    180_000,
  );
}
