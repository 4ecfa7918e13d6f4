import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The sources' `agent-gateway` entry point (compiled on load by tsx). */
export const SOURCES_CLI_ENTRY = fileURLToPath(new URL('../cli/agent-gateway.mjs', import.meta.url));
/**
 * The `agent-gateway` entry point, for running the CLI as a separate process: in a vitest run, the bundle
 * its global setup built from the sources (dev/test-cli-bundle.mjs); elsewhere the sources.
 */
export const CLI_ENTRY = process.env.AGENT_GATEWAY_TEST_CLI || SOURCES_CLI_ENTRY;
/** How long `stop()` waits after SIGTERM before SIGKILL: inside vitest's 20 s hook timeout. */
export const STOP_GRACE_MS = 10_000;
/** The built CLI (`npm run build`), as the installed package runs it. */
export const BUILT_CLI_ENTRY = fileURLToPath(new URL('../dist/cli/agent-gateway.js', import.meta.url));

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends SIGTERM (SIGKILL after `STOP_GRACE_MS`) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `agent-gateway serve --port 0 --exit-with-stdin <args>` as a child process and resolves once it
 * prints its URL; it ends when this process does, however this process ends.
 * Used by the benchmark (the server must not share an event loop with the load generator) and by tests.
 */
export function spawnServe(
  args: string[] = [],
  options: {
    timeoutMs?: number;
    entry?: string;
    env?: Record<string, string>;
    nodeArgs?: string[];
    /** Another command that prints `listening on URL` (e.g. `proxy`). */
    command?: string;
  } = {},
): Promise<ServeProcess> {
  const entry = [...(options.nodeArgs ?? []), options.entry ?? CLI_ENTRY];
  // --exit-with-stdin on a pipe held by this process: the server ends with it, however it ends (a test
  // runner killed by SIGKILL included), rather than being left listening. Only for this checkout's CLI (a
  // baseline build given as `entry` may predate the option).
  const ours =
    options.entry === undefined || options.entry === CLI_ENTRY || options.entry === BUILT_CLI_ENTRY;
  const watch = ours ? ['--exit-with-stdin'] : [];
  const command = [...entry, options.command ?? 'serve', '--port', '0', ...watch, ...args];
  const child = spawn(process.execPath, command, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent-gateway serve did not start:\n${output}`));
    }, options.timeoutMs ?? 30_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`agent-gateway serve exited with ${code}:\n${output}`));
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.stdout?.on('data', (more: Buffer) => {
        output += more.toString();
      });
      child.stderr?.on('data', (more: Buffer) => {
        output += more.toString();
      });
      resolve({
        url,
        child,
        output: () => output,
        stop: () =>
          new Promise((done) => {
            // Already gone (exited, or killed by a signal: then exitCode stays null): no exit event to wait for.
            if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
            // A server that has not ended well after SIGTERM (a loaded machine, a worker stuck) is killed, so a
            // test's clean-up never waits on it for ever; the exit code then is null, which a test that asserts
            // a clean exit (0) reports.
            const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
            child.once('exit', (code) => {
              clearTimeout(kill);
              done(code);
            });
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}
