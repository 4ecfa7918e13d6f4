import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { readYamlFile } from '../mock-server/config/load-config.ts';
import { BUILT_CLI_ENTRY, spawnServe } from './spawn-serve.ts';

/* The servers the benchmark measures (bare node:http, the gateway as the package runs it), and their CPU
 * time and memory read from /proc. */

export const BENCH_CONFIG = fileURLToPath(new URL('../fixtures/config/bench.yaml', import.meta.url));
// The spread-out gateway's tokens are minted here, so its signing secret is fixed in its config.
const BENCH_SECRET = 'bench-only-signing-secret-0123456789';

// Linux: the CPU time of a process, all its threads (the event loop, V8's GC helpers, libuv's pool), from
// the scheduler's nanosecond counters (/proc/PID/task/TID/schedstat); the 10 ms ticks of /proc/PID/stat
// where those are missing. Read from outside, so it holds whatever else shares the machine.
const TICK_MS = 10;
export function cpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // no schedstat (a kernel without it): the ticks below
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
/** A process and its children (serve --workers: the primary and its workers), as Linux lists them. */
export function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(children ? children.split(/\s+/).map(Number) : [])];
  } catch {
    return [pid];
  }
}
export const treeCpuMs = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export interface Target {
  name: string;
  url: string;
  pid: number;
  tokens: string[];
  stop(): Promise<unknown>;
  /** Another process whose CPU per request is reported beside the server's (Redis). */
  sidecarPid?: number;
  /** Everything the server printed so far: its collections' lines when it runs under `TRACE_GC` (gc-trace.ts). */
  output?(): string;
}

export async function startBare(
  mode: 'like-for-like' | 'precomputed',
  sampleFile: string,
  name: string,
  nodeArgs: string[] = [],
) {
  const script = fileURLToPath(new URL('./bench-bare-server.mjs', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, mode, sampleFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    name,
    url,
    pid: child.pid as number,
    output: () => output,
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A gateway config with `count` verified agents (ids agent-0..., keys ak_bench_...), limits as in bench.yaml. */
export function fleetConfig(dir: string, count: number): string {
  const file = join(dir, `fleet-${count}.yaml`);
  const base = readYamlFile(BENCH_CONFIG) as Record<string, unknown>;
  const agents = Array.from({ length: count }, (_, i) => ({
    id: `agent-${i}`,
    api_key: `ak_bench_${String(i).padStart(6, '0')}_${(i * 2654435761).toString(36)}`,
    tier: 'verified',
  }));
  writeFileSync(file, stringify({ ...base, identity: { signing_secret: BENCH_SECRET }, agents }));
  return file;
}

// The gateway as the package runs it: the built CLI (compiled JavaScript); the sources through tsx when
// there is no build (tsx adds a little per request, e.g. its function-name wrappers).
export const ENTRY = existsSync(BUILT_CLI_ENTRY) ? BUILT_CLI_ENTRY : undefined;

export async function startGateway(
  name: string,
  config: string,
  mint: (url: string) => Promise<string[]>,
  args: string[] = [],
  nodeArgs: string[] = [],
  entry: string | undefined = ENTRY,
) {
  const served = await spawnServe(['--config', config, ...args], {
    entry,
    timeoutMs: 60_000,
    nodeArgs,
  });
  return {
    name,
    url: served.url,
    pid: served.child.pid as number,
    tokens: await mint(served.url),
    output: served.output,
    stop: () => served.stop(),
  };
}

export async function mintOne(url: string): Promise<string[]> {
  const minted = await fetch(`${url}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
  });
  return [((await minted.json()) as { token: string }).token];
}
