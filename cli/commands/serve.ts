import type { Cluster } from 'node:cluster';
import type { Command } from 'commander';
import type { GatewayConfigOverlay } from '../../mock-server/config/schema.ts';
import { bundledScenarioNames } from '../../mock-server/fixtures-dir.ts';
import type { Gateway } from '../../mock-server/gateway.ts';
import { displayUrl } from '../../mock-server/store/display-url.ts';
import { baseUrlOption, CliError, EXIT, envConfigOverrides, intOption } from '../cli-options.ts';
import {
  type ListenOptions,
  listenerAdminKey,
  stopWhenStdinCloses,
  throwIfPortInUse,
  withListenOptions,
} from './listening.ts';

interface ServeOptions extends ListenOptions {
  config?: string;
  idpUrl?: string;
  scenario?: string;
  adminKey?: string;
  allowPublicSecret?: boolean;
  store?: string;
  workers: number;
}

/** What a worker tells the primary (serve --workers) once it listens. */
interface WorkerListening {
  type: 'agent-gateway-listening';
  description: string;
}

function describeStartup(
  url: string,
  gateway: Gateway,
  options: { idpUrl?: string; adminKey?: string; store: string },
): string {
  const { idpUrl } = options;
  const registered = gateway.registry.list();
  // The agents' API keys are fixtures (config agents[].api_key): shown so a harness in any language can mint.
  const agents = registered
    .map(
      (a) =>
        `    ${a.id.padEnd(20)} tier ${a.tier.padEnd(13)} API key ${a.apiKey}${a.disabled ? ' (disabled)' : ''}`,
    )
    .join('\n');
  const minter =
    registered.find((a) => a.id === 'agent-verified' && !a.disabled) ?? registered.find((a) => !a.disabled);
  const tools = Object.entries(gateway.policy.tools)
    .map(
      ([name, t]) =>
        `    ${name.padEnd(12)} tiers: ${t.tiers.join(', ') || '(none)'}${t.enabled ? '' : ' (disabled)'}`,
    )
    .join('\n');
  const limits = gateway.config.rate_limits;
  const rules = limits.rules
    .map(
      (r) =>
        `    ${r.name}: ${r.limit} per ${r.window_seconds} s, ${r.algorithm}, per ${r.scope}${r.operations ? ` (${r.operations.join(', ')})` : ''}`,
    )
    .join('\n');
  return [
    `Agent Tool Gateway (reference) listening on ${url}`,
    `  config: ${gateway.config.source}`,
    ...(gateway.scenario ? [`  scenario: ${gateway.scenario.name}: ${gateway.scenario.description}`] : []),
    ...(gateway.runtime.replay
      ? [
          `  replay: ${gateway.runtime.replay
            .agents()
            .map((a) => `${a.answers} recorded answer(s) of ${a.agent}`)
            .join(', ')}, in order per endpoint; then the config's answers`,
        ]
      : []),
    idpUrl ? `  identity: verified by the identity provider at ${idpUrl}` : `  identity provider: ${url}/idp`,
    `  token lifetime: ${gateway.idp.ttlSeconds} s`,
    options.store === 'memory'
      ? '  state: in this process (--store redis://... to share it between instances)'
      : `  state: shared in ${displayUrl(options.store)} (limits, revocations, idempotency keys, admin changes, journal)`,
    ...(idpUrl
      ? []
      : [
          gateway.config.identity.signing_secret !== undefined
            ? '  token signing: the configured secret (identity.signing_secret or AGENT_GATEWAY_SIGNING_SECRET)'
            : options.store === 'memory'
              ? '  token signing: a random secret of this process (`agent-gateway token` asks this gateway)'
              : '  token signing: a random secret generated into the store, shared by every instance (`agent-gateway token` asks this gateway)',
        ]),
    `  rate limits (Retry-After as ${limits.retry_after}):`,
    rules || '    (none)',
    `    concurrency per agent: ${limits.concurrency.per_agent ?? 'unlimited'}`,
    options.adminKey
      ? `  admin API: ${url}/__admin (send X-Admin-Key)`
      : '  admin API: off (pass --admin-key or set AGENT_GATEWAY_ADMIN_KEY)',
    '  tools:',
    tools,
    ...(idpUrl ? [] : ['  agents (fixtures):', agents]),
    '',
    'Try it:',
    `  curl -s ${url}/v1/health`,
    // With a remote identity provider, tokens come from it: this gateway serves no /idp.
    idpUrl
      ? '  TOKEN=<a token from that identity provider>'
      : `  TOKEN=$(npx --no-install agent-gateway token agent-verified --base-url ${url})`,
    `  curl -s ${url}/v1/whoami -H "X-Agent-Identity: $TOKEN"`,
    ...(idpUrl || !minter
      ? []
      : [
          'From any language: POST an API key to /idp/token, send the "token" of the answer as X-Agent-Identity',
          `  curl -s ${url}/idp/token -H 'content-type: application/json' -d '{"api_key":"${minter.apiKey}"}'`,
          '  (Python: the pytest plugin in python/; every language: docs/any-language.md)',
        ]),
    '',
    'Press Ctrl+C to stop.',
  ].join('\n');
}

/**
 * A public signing secret lets anyone mint tokens: refused on a host others can reach (unless forced), and
 * warned about loudly, like a short one, wherever the gateway listens.
 */
async function refuseOrWarnAboutSecret(
  secret: string | undefined,
  options: { host: string; allowPublicSecret?: boolean },
): Promise<void> {
  const { publicSecretRefusal, signingSecretProblem, signingSecretWarning } = await import(
    '../../mock-server/identity/signing-secret.ts'
  );
  const refusal = publicSecretRefusal(secret, options.host, options.allowPublicSecret === true);
  if (refusal) throw new CliError(refusal);
  const problem = signingSecretProblem(secret);
  if (!problem) return;
  const rule = '*'.repeat(100);
  process.stderr.write(`${rule}\n${signingSecretWarning(problem)}\n${rule}\n`);
}

/** `agent-gateway serve`: the reference gateway as a local HTTP server. */
export function registerServeCommand(program: Command) {
  withListenOptions(
    program
      .command('serve')
      .description('serve the reference gateway and its simulated identity provider over HTTP'),
    8787,
  )
    .option(
      '-c, --config <file>',
      'YAML or JSON config laid over the bundled default (fixtures/config/default.yaml)',
    )
    .option(
      '--idp-url <url>',
      'verify tokens with the identity provider at this base URL instead of in-process',
      baseUrlOption,
    )
    .option(
      '-s, --scenario <name|file>',
      `QA scenario laid over the config (bundled: ${bundledScenarioNames().join(', ')})`,
    )
    .option(
      '--admin-key <key>',
      'enable the admin API under /__admin with this key, 8 characters or more; prefer $AGENT_GATEWAY_ADMIN_KEY, which is the default: a command-line argument is visible to every user of the machine in `ps`',
    )
    .option(
      '--allow-public-secret',
      'listen on a host other than loopback even though the identity signing secret is a public one (anyone who reaches the gateway could mint tokens for any agent)',
    )
    .option(
      '--store <url>',
      "where shared state lives: memory (this process) or redis://HOST:PORT[/DB], shared by every instance using it (default: $AGENT_GATEWAY_STORE, else the config's store.url, else memory)",
    )
    .option(
      '--workers <n>',
      'processes serving the port together (node:cluster); more than 1 needs --store redis://...',
      intOption(1, 64),
      1,
    )
    .action(async (options: ServeOptions) => {
      const adminKey = listenerAdminKey(options.adminKey);
      // The gateway loads when the command runs, not at start: `--help` and `token` must not pay for it.
      const [
        { serve },
        { createSharedGateway },
        { createRemoteVerifier },
        { DEFAULT_CONFIG_FILE, deepMerge, loadConfig },
        cluster,
      ] = await Promise.all([
        import('../../mock-server/adapters/node-server.ts'),
        import('../../mock-server/gateway.ts'),
        import('../../mock-server/identity/verifier.ts'),
        import('../../mock-server/config/load-config.ts'),
        import('node:cluster').then((m) => m.default),
      ]);
      const overlay = deepMerge(
        envConfigOverrides() ?? {},
        options.store ? { store: { url: options.store } } : {},
      ) as GatewayConfigOverlay;
      const config = loadConfig({
        // The bundled file when none is named, so the startup text names it even with overrides laid over it.
        file: options.config ?? DEFAULT_CONFIG_FILE,
        config: Object.keys(overlay).length > 0 ? overlay : undefined,
      });
      if (options.workers > 1 && config.store.url === 'memory')
        throw new CliError(
          `--workers ${options.workers} needs a shared store (--store redis://HOST:PORT, AGENT_GATEWAY_STORE or store.url): each worker is a process with its own memory, so without one every worker would admit the full rate limit, keep its own journal, and miss revocations and admin changes made through the others.`,
        );
      // Checked once, by the process that starts (the primary, with --workers), before anything listens.
      if (!cluster.isWorker) await refuseOrWarnAboutSecret(config.identity.signing_secret, options);
      if (options.workers > 1 && cluster.isPrimary)
        return runWorkers(cluster, options.workers, config.store.url, options.exitWithStdin);
      const gateway = await createSharedGateway({
        config,
        verifier: options.idpUrl ? createRemoteVerifier(options.idpUrl) : undefined,
        scenario: options.scenario,
        adminKey,
      }).catch((error: Error) => {
        throw new CliError(error.message);
      });
      const server = await serve(gateway, { port: options.port, host: options.host }).catch(
        (error: NodeJS.ErrnoException) => {
          throwIfPortInUse(error, options);
          if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
            throw new CliError(`Cannot listen on host ${options.host}: ${error.message}`);
          throw error;
        },
      );
      const description = describeStartup(server.url, gateway, {
        idpUrl: options.idpUrl,
        adminKey,
        store: config.store.url,
      });
      if (cluster.isWorker) {
        // The primary prints it once every worker listens.
        process.send?.({ type: 'agent-gateway-listening', description } satisfies WorkerListening);
      } else process.stdout.write(`${description}\n`);
      const stop = async () => {
        if (!cluster.isWorker) process.stdout.write('\nStopping.\n');
        await server.close();
        await gateway.close();
        process.exit(EXIT.ok);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // A worker ends with its primary (node:cluster: the IPC channel closes); the primary watches stdin.
      if (!cluster.isWorker) stopWhenStdinCloses(options.exitWithStdin, () => void stop());
    });
}

/**
 * `serve --workers N`: the primary forks N workers running this same command (node:cluster shares the
 * port between them), prints the startup text once all of them listen, replaces a worker that dies, and
 * stops them all on SIGINT/SIGTERM. It serves nothing itself.
 */
function runWorkers(cluster: Cluster, count: number, store: string, exitWithStdin?: boolean): Promise<void> {
  let listening = 0;
  let stopping = false;
  return new Promise(() => {
    cluster.on('message', (_worker, message: WorkerListening) => {
      if (message?.type !== 'agent-gateway-listening') return;
      listening += 1;
      if (listening !== count) return;
      process.stdout.write(
        `${message.description.replace(
          /\n/,
          `\n  workers: ${count} processes sharing the port (node:cluster), state shared in ${displayUrl(store)}\n`,
        )}\n`,
      );
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(EXIT.ok);
        return;
      }
      if (listening < count) {
        // A worker that cannot start (its error is above) would fail again: stop rather than loop.
        process.stderr.write(`A worker could not start (${signal ?? `code ${code}`}): stopping.\n`);
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(EXIT.cannotRun);
        setTimeout(() => process.exit(EXIT.cannotRun), 5000).unref();
        return;
      }
      process.stderr.write(
        `worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another\n`,
      );
      cluster.fork();
    });
    // Each worker accepts its own connections from the shared listen socket (the kernel queues them), rather
    // than the primary accepting and handing them over (round-robin, Node's default elsewhere): a connection
    // handed to a worker killed before it confirmed stayed open in the primary, unanswered, until the client
    // gave up. With the workers accepting, a killed worker's connections are reset at once, and those it had
    // not accepted wait in the socket's queue for the others.
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    for (let i = 0; i < count; i++) cluster.fork();
    const stop = () => {
      if (stopping) return;
      stopping = true;
      process.stdout.write('\nStopping.\n');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopWhenStdinCloses(exitWithStdin, stop);
  });
}
