import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { describeNeeding, type SystemBinary } from './system-binary.ts';

/** Debian's redis-server (`apt-get install -y redis-server`), or another binary named by AGENT_GATEWAY_REDIS_SERVER. */
export const REDIS_SERVER = process.env.AGENT_GATEWAY_REDIS_SERVER || '/usr/bin/redis-server';
const REDIS: SystemBinary = {
  what: 'redis-server',
  path: REDIS_SERVER,
  requireEnv: 'AGENT_GATEWAY_REQUIRE_REDIS',
  install:
    'apt-get update && apt-get install -y redis-server (no need to run it as a service: the tests start their own), or set AGENT_GATEWAY_REDIS_SERVER',
};

/**
 * A describe block for tests against a real Redis. Without redis-server it is skipped, loudly (saying how
 * to install it); with AGENT_GATEWAY_REQUIRE_REDIS=1 (CI) a missing server is a failing test instead.
 */
export function describeWithRedis(name: string, body: () => void) {
  describeNeeding(REDIS, 'Redis', name, body);
}

/** A free loopback port (the OS picks it; the server using it binds right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the test's own: loopback, a temporary directory, no persistence unless asked. */
export interface RedisProcess {
  url: string;
  port: number;
  /** The server's process id (it changes on restart). */
  readonly pid: number;
  /** Stops the server (by its PID) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`): empty, or as its append-only file left it. */
  restart(): Promise<void>;
  /** Removes the temporary directory (after `stop`). */
  cleanup(): void;
}

/**
 * Starts redis-server on a free loopback port and resolves once it accepts connections. `appendonly`: with
 * an append-only file written on every command (what a team that needs the journal kept would configure),
 * so a restart reads everything back.
 */
export async function startRedis(options: { appendonly?: boolean } = {}): Promise<RedisProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agw-redis-'));
  let child: ChildProcess | undefined;
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        ...(options.appendonly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      ];
      const proc = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      // Never outlive the test process, even when a hook times out before stop() (a server left over
      // from such a run was found still listening).
      const orphan = () => proc.kill('SIGKILL');
      process.once('exit', orphan);
      proc.once('exit', () => process.off('exit', orphan));
      let output = '';
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`redis-server did not start:\n${output}`));
      }, 20_000);
      proc.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/i.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
  await launch();
  const stop = () =>
    new Promise<void>((resolve) => {
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.removeAllListeners('exit');
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid as number;
    },
    stop,
    restart: launch,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Call inside a `describeWithRedis` block: a redis-server of the block's own, started before its tests and
 * stopped (and its directory removed) after them. The handle forwards to the running server.
 */
export function useRedis(options: { appendonly?: boolean } = {}): RedisProcess {
  let current: RedisProcess | undefined;
  beforeAll(async () => {
    current = await startRedis(options);
  }, 30_000);
  afterAll(async () => {
    await current?.stop();
    current?.cleanup();
  }, 30_000);
  const running = () => {
    if (!current)
      throw new Error('useRedis: Redis is started in beforeAll; use the handle inside tests and hooks');
    return current;
  };
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get pid() {
      return running().pid;
    },
    stop: () => running().stop(),
    restart: () => running().restart(),
    cleanup: () => running().cleanup(),
  };
}
