import { type Command, Option } from 'commander';
import { adminKeyProblem } from '../../mock-server/routes/admin-key.ts';
import { CliError, intOption } from '../cli-options.ts';

/*
 * What the commands that listen (serve, proxy) share: where they listen, the admin key they serve their
 * admin API under, and what a port in use means.
 */

/** The options `withListenOptions` adds, as commander parses them. */
export interface ListenOptions {
  port: number;
  host: string;
  exitWithStdin?: boolean;
}

/**
 * Adds --port (default `port`; 0 picks a free one), --host (default $AGENT_GATEWAY_HOST, else loopback) and
 * --exit-with-stdin to a listening command. The container image sets AGENT_GATEWAY_HOST=0.0.0.0: inside it,
 * loopback is unreachable.
 */
export const withListenOptions = (command: Command, port: number): Command =>
  command
    .option('-p, --port <port>', 'port to listen on (0 picks a free port)', intOption(0, 65535), port)
    .addOption(
      new Option('-H, --host <host>', 'interface to listen on')
        .env('AGENT_GATEWAY_HOST')
        .default('127.0.0.1'),
    )
    .option(
      '--exit-with-stdin',
      'stop when standard input closes: for a program that starts this one with a pipe as its stdin, so it never outlives that program, however it ends (killed included)',
    );

/**
 * With --exit-with-stdin: runs `stop` once standard input ends (end of file, or an error: the pipe's other
 * end is closed). The kernel closes a pipe when the process holding its other end ends, however it ends
 * (SIGKILL, a crash), so the parent that started this process with a pipe never leaves it running.
 * Whatever arrives on stdin is read and ignored.
 */
export function stopWhenStdinCloses(enabled: boolean | undefined, stop: () => void): void {
  if (!enabled) return;
  let stopped = false;
  const once = () => {
    if (stopped) return;
    stopped = true;
    process.stderr.write('Standard input closed (--exit-with-stdin): stopping.\n');
    stop();
  };
  process.stdin.on('data', () => {});
  process.stdin.once('end', once);
  process.stdin.once('close', once);
  process.stdin.once('error', once);
  process.stdin.resume();
}

/**
 * The admin key: --admin-key, else $AGENT_GATEWAY_ADMIN_KEY. One no request could send (blank, spaces at
 * either end, a control character) or shorter than 8 characters is refused at start (exit 2).
 */
export function listenerAdminKey(given: string | undefined): string | undefined {
  const adminKey = given ?? process.env.AGENT_GATEWAY_ADMIN_KEY;
  const problem = adminKey === undefined ? undefined : adminKeyProblem(adminKey);
  if (problem)
    throw new CliError(`${problem}${given === undefined ? ' (from $AGENT_GATEWAY_ADMIN_KEY)' : ''}`);
  return adminKey;
}

/** Throws the CLI's plain error when listening failed because the port is in use; other errors are the caller's. */
export function throwIfPortInUse(error: NodeJS.ErrnoException, at: { port: number; host: string }): void {
  if (error.code === 'EADDRINUSE')
    throw new CliError(`Port ${at.port} on ${at.host} is in use: pass --port with a free port (or 0).`);
}
