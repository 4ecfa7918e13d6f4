import { InvalidArgumentError } from 'commander';
import type { GatewayConfigOverlay } from '../mock-server/config/schema.ts';

/** Exit codes shared by every command: 0 done, 1 a check or rule failed, 2 could not do the job. */
export const EXIT = { ok: 0, failed: 1, cannotRun: 2 } as const;

/** An error the CLI reports as one plain line (no stack) with its exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.cannotRun) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Commander argument parser for an integer within bounds. */
export const intOption = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || n < min || n > max) {
    throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
  }
  return n;
};

/** Commander argument parser for an http(s) base URL; the trailing slash is dropped. */
export const baseUrlOption = (value: string) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an absolute URL such as http://127.0.0.1:8787');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('must be http or https');
  return url.href.replace(/\/+$/, '');
};

/**
 * Overrides from the environment, as a config fragment: the signing secret (AGENT_GATEWAY_SIGNING_SECRET)
 * and where shared state lives (AGENT_GATEWAY_STORE, e.g. redis://127.0.0.1:6379).
 */
export function envConfigOverrides(): GatewayConfigOverlay | undefined {
  const secret = process.env.AGENT_GATEWAY_SIGNING_SECRET;
  const store = process.env.AGENT_GATEWAY_STORE;
  if (!secret && !store) return undefined;
  return {
    ...(secret ? { identity: { signing_secret: secret } } : {}),
    ...(store ? { store: { url: store } } : {}),
  };
}
