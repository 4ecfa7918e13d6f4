import type { Command } from 'commander';
import { bundledScenarioNames } from '../../mock-server/fixtures-dir.ts';
import type { Gateway } from '../../mock-server/gateway.ts';
import { baseUrlOption, CliError, EXIT, envConfigOverrides, intOption } from '../cli-options.ts';

interface ServeOptions {
  port: number;
  host: string;
  config?: string;
  idpUrl?: string;
  scenario?: string;
  adminKey?: string;
}

function describeStartup(
  url: string,
  gateway: Gateway,
  options: { idpUrl?: string; adminKey?: string },
): string {
  const { idpUrl } = options;
  const agents = gateway.registry
    .list()
    .map((a) => `    ${a.id.padEnd(20)} tier ${a.tier.padEnd(13)}${a.disabled ? ' (disabled)' : ''}`)
    .join('\n');
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
    idpUrl ? `  identity: verified by the identity provider at ${idpUrl}` : `  identity provider: ${url}/idp`,
    `  token lifetime: ${gateway.idp.ttlSeconds} s`,
    `  rate limits (Retry-After as ${limits.retry_after}):`,
    rules || '    (none)',
    `    concurrency per agent: ${limits.concurrency.per_agent ?? 'unlimited'}`,
    options.adminKey
      ? `  admin API: ${url}/__admin (send X-Admin-Key)`
      : '  admin API: off (pass --admin-key or set AGENT_GATEWAY_ADMIN_KEY)',
    '  tools:',
    tools,
    ...(idpUrl ? [] : ['  agents:', agents]),
    '',
    'Try it:',
    `  curl -s ${url}/v1/health`,
    // With a remote identity provider, tokens come from it: this gateway serves no /idp.
    idpUrl
      ? '  TOKEN=<a token from that identity provider>'
      : `  TOKEN=$(npx --no-install agent-gateway token agent-verified --base-url ${url})`,
    `  curl -s ${url}/v1/whoami -H "X-Agent-Identity: $TOKEN"`,
    '',
    'Press Ctrl+C to stop.',
  ].join('\n');
}

/** `agent-gateway serve`: the reference gateway as a local HTTP server. */
export function registerServeCommand(program: Command) {
  program
    .command('serve')
    .description('serve the reference gateway and its simulated identity provider over HTTP')
    .option('-p, --port <port>', 'port to listen on (0 picks a free port)', intOption(0, 65535), 8787)
    .option('-H, --host <host>', 'interface to listen on', '127.0.0.1')
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
      'enable the admin API under /__admin with this key, 8 characters or more (default: $AGENT_GATEWAY_ADMIN_KEY)',
    )
    .action(async (options: ServeOptions) => {
      const adminKey = options.adminKey ?? process.env.AGENT_GATEWAY_ADMIN_KEY;
      if (adminKey !== undefined && adminKey.length < 8)
        throw new CliError('The admin key must be at least 8 characters.');
      // The gateway loads when the command runs, not at start: `--help` and `token` must not pay for it.
      const [{ serve }, { createGateway }, { createRemoteVerifier }] = await Promise.all([
        import('../../mock-server/adapters/node-server.ts'),
        import('../../mock-server/gateway.ts'),
        import('../../mock-server/identity/verifier.ts'),
      ]);
      const gateway = createGateway({
        configFile: options.config,
        config: envConfigOverrides(),
        verifier: options.idpUrl ? createRemoteVerifier(options.idpUrl) : undefined,
        scenario: options.scenario,
        adminKey,
      });
      const server = await serve(gateway, { port: options.port, host: options.host }).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'EADDRINUSE')
            throw new CliError(
              `Port ${options.port} on ${options.host} is in use: pass --port with a free port (or 0).`,
            );
          if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
            throw new CliError(`Cannot listen on host ${options.host}: ${error.message}`);
          throw error;
        },
      );
      process.stdout.write(`${describeStartup(server.url, gateway, { idpUrl: options.idpUrl, adminKey })}\n`);
      const stop = async () => {
        process.stdout.write('\nStopping.\n');
        await server.close();
        process.exit(EXIT.ok);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
