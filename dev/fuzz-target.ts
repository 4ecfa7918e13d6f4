/**
 * The gateway `npm run fuzz` and `npm run soak` send their requests to: an `agent-gateway serve` process of its
 * own on loopback, with its own config (short timeouts, so stalled requests are answered within seconds), a
 * random signing secret, and tokens minted from its identity provider for the given API keys.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { spawnServe } from './spawn-serve.ts';

/** The largest fast-check seed a run takes. */
const MAX_SEED = 2_147_483_647;

/** Adds --seed (a fast-check seed; `help` says what it does for this command) to a command. */
export const withSeedOption = (command: Command, help: string): Command =>
  command.option('--seed <n>', help, intOption(0, MAX_SEED));

/** The run's seed: the one given with --seed, else a random one (the run prints it, so it can be replayed). */
export const seedOf = (given: number | undefined): number => given ?? Math.floor(Math.random() * MAX_SEED);

/** A running target; `stop()` ends the process and removes its config. */
interface FuzzTarget {
  url: string;
  pid: number;
  port: number;
  tokens: string[];
  /** The process has ended (it must not, whatever it was sent). */
  exited(): boolean;
  /** Its resident memory now, in MB (Linux /proc). */
  rssMb(): number;
  stop(): Promise<void>;
}

/** Server timeouts of the target's config, in milliseconds. */
interface TargetTimeouts {
  headers_timeout_ms: number;
  request_timeout_ms: number;
  idle_timeout_ms: number;
}

/** Starts a target named `name` (its temporary folder's prefix) with these timeouts and tokens for `apiKeys`. */
async function startFuzzTarget(
  name: string,
  timeouts: TargetTimeouts,
  apiKeys: readonly string[],
): Promise<FuzzTarget> {
  const dir = mkdtempSync(join(tmpdir(), `agent-gateway-${name}-`));
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `server:\n${Object.entries(timeouts)
      .map(([key, ms]) => `  ${key}: ${ms}\n`)
      .join('')}`,
  );
  const server = await spawnServe(['--config', config], { env: { AGENT_GATEWAY_SIGNING_SECRET: '' } });
  const pid = server.child.pid as number;
  const stop = async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const tokens = await Promise.all(
      apiKeys.map(async (apiKey) => {
        const minted = await fetch(`${server.url}/idp/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: apiKey }),
        });
        return ((await minted.json()) as { token: string }).token;
      }),
    );
    return {
      url: server.url,
      pid,
      port: Number(new URL(server.url).port),
      tokens,
      exited: () => server.child.exitCode !== null || server.child.signalCode !== null,
      rssMb: () =>
        Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `body` against a target started with these settings, and stops the target after, whatever happened. */
export async function withFuzzTarget(
  name: string,
  timeouts: TargetTimeouts,
  apiKeys: readonly string[],
  body: (target: FuzzTarget) => Promise<void>,
): Promise<void> {
  const target = await startFuzzTarget(name, timeouts, apiKeys);
  try {
    await body(target);
  } finally {
    await target.stop();
  }
}
