import type { Command } from 'commander';
import type { AdminTarget } from '../admin-client.ts';
import { baseUrlOption, CliError } from '../cli-options.ts';

/** What every `admin` command shares: where the gateway is, its key, JSON or text output, safe printing. */
export interface ConnectionOptions {
  baseUrl: string;
  adminKey?: string;
  json?: boolean;
}

/** The options every admin command takes: where, the key, and JSON output. */
export function connected(command: Command): Command {
  return command
    .option('--base-url <url>', 'the gateway', baseUrlOption, 'http://127.0.0.1:8787')
    .option('--admin-key <key>', "the gateway's admin key (default: $AGENT_GATEWAY_ADMIN_KEY)")
    .option('--json', 'print the admin API answer as JSON');
}

export function targetOf(options: ConnectionOptions): AdminTarget {
  const adminKey = options.adminKey ?? (process.env.AGENT_GATEWAY_ADMIN_KEY || undefined);
  if (!adminKey)
    throw new CliError(
      'Give --admin-key (or set AGENT_GATEWAY_ADMIN_KEY): the admin commands use the admin API.',
    );
  return { baseUrl: options.baseUrl, adminKey };
}

/** Prints the answer: as JSON with --json, else as the text `describe` makes of it. */
export function print<T>(options: ConnectionOptions, answer: T, describe: (answer: T) => string): void {
  process.stdout.write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : `${describe(answer)}\n`);
}

// Text from agents (queries, URLs, names) goes to a terminal: control characters are shown, not obeyed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
export const plain = (text: string) =>
  text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
