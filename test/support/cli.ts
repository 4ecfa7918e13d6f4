import { execFile } from 'node:child_process';
import { CLI_ENTRY as CLI, spawnServe } from '../../dev/spawn-serve.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `agent-gateway <args>` to completion. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts `agent-gateway serve` on a free port (the same helper the benchmark uses). */
export const startServe = (args: string[] = [], env?: Record<string, string>) => spawnServe(args, { env });
