import { spawn } from 'node:child_process';
import { REAL_CLOCK, type SuiteClock } from '../model/suite-clock.ts';

/** Where a token comes from: a fixed value, or a command run again when the token stops working. */
export interface TokenSource {
  /** What the token is called in reproductions, e.g. `$TOKEN`. */
  readonly variable: string;
  current(): Promise<string>;
  /** A fresh token (or the one just refreshed), when the source can make one (a command); undefined for a fixed token. */
  refresh(): Promise<string | undefined>;
}

/** Raised when a token command fails: the suite cannot do its job (exit 2). */
export class TokenCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenCommandError';
  }
}

export function staticToken(token: string, variable: string): TokenSource {
  const value = token.trim();
  if (!value) throw new TokenCommandError(`${variable} is empty`);
  return { variable, current: async () => value, refresh: async () => undefined };
}

/** Runs `command` in a shell; the token is the last non-empty line of its standard output. */
function runTokenCommand(command: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new TokenCommandError(`token command timed out after ${timeoutMs / 1000} s: ${command}`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new TokenCommandError(`token command could not start (${error.message}): ${command}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const token = stdout.trim().split('\n').at(-1)?.trim() ?? '';
      if (code !== 0) {
        reject(new TokenCommandError(`token command exited with ${code}: ${command}\n${stderr.trim()}`));
      } else if (!token) {
        reject(new TokenCommandError(`token command printed no token: ${command}`));
      } else resolve(token);
    });
  });
}

/**
 * A token from a command, run once up front and again (at most every 2 s on `clock`, the run's) when the
 * gateway refuses it. Requests refused together (concurrent copies sent with the old token) all get the
 * one fresh token.
 */
export function commandToken(
  command: string,
  variable: string,
  clock: Pick<SuiteClock, 'now'> = REAL_CLOCK,
): TokenSource {
  let token: Promise<string> | undefined;
  let lastRefresh = Number.NEGATIVE_INFINITY;
  return {
    variable,
    current: () => {
      token ??= runTokenCommand(command);
      return token;
    },
    async refresh() {
      if (token && clock.now() - lastRefresh < 2000) return token;
      lastRefresh = clock.now();
      token = runTokenCommand(command);
      return token;
    },
  };
}
