import type { Command } from 'commander';
import { baseUrlOption, CliError, envConfigOverrides } from '../cli-options.ts';

/** Where `npm start` (and `agent-gateway serve` without options) listens. */
const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8787';

interface TokenOptions {
  baseUrl?: string;
  config?: string;
  apiKey?: string;
}

async function mintRemotely(
  baseUrl: string,
  apiKey: string,
  implicit: boolean,
): Promise<{ token: string; expires_at: string; agent_id: string }> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: apiKey }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const why = (error as Error).cause ?? (error as Error).message;
    if (implicit) {
      throw new CliError(
        `No gateway answers at ${baseUrl} (${why}). No identity signing secret is configured, so a token must come from the running gateway (each one signs with a random secret of its own): start it (\`npm start\` or \`npx agent-gateway serve\`), pass --base-url with its URL, or give \`serve\` and \`token\` the same private AGENT_GATEWAY_SIGNING_SECRET.`,
      );
    }
    throw new CliError(`Cannot reach the identity provider at ${baseUrl}/idp/token: ${why}`);
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof body.token !== 'string') {
    throw new CliError(
      `The identity provider refused: HTTP ${response.status} ${body.code ?? ''} ${body.message ?? ''}`.trim(),
    );
  }
  return body as { token: string; expires_at: string; agent_id: string };
}

/** The gateway asked when neither --base-url nor a signing secret is given: $AGENT_GATEWAY_BASE_URL or npm start's. */
function defaultGatewayUrl(): string {
  const fromEnv = process.env.AGENT_GATEWAY_BASE_URL;
  if (!fromEnv) return DEFAULT_GATEWAY_URL;
  try {
    return baseUrlOption(fromEnv);
  } catch (error) {
    throw new CliError(`AGENT_GATEWAY_BASE_URL ${(error as Error).message}, not "${fromEnv}".`);
  }
}

/**
 * Exchanges the key at the identity provider of `baseUrl` (undefined: the default gateway, with advice when
 * none answers): details on stderr, the token alone as stdout's last line.
 */
async function printRemoteToken(baseUrl: string | undefined, apiKey: string) {
  const url = baseUrl ?? defaultGatewayUrl();
  const minted = await mintRemotely(url, apiKey, baseUrl === undefined);
  process.stderr.write(
    `# ${minted.agent_id}: token from the gateway at ${url}, expires ${minted.expires_at}\n`,
  );
  process.stdout.write(`${minted.token}\n`);
}

/**
 * `agent-gateway token`: prints a fresh identity token. Details go to stderr and the token is the last
 * line on stdout, so `TOKEN=$(agent-gateway token agent-early)` works.
 */
export function registerTokenCommand(program: Command) {
  program
    .command('token')
    .description('print a fresh identity token for a fixture agent (the last line of output is the token)')
    .argument('[agent-id]', 'agent id from the config, e.g. agent-early, agent-verified')
    .option(
      '--base-url <url>',
      `mint from the identity provider of the gateway running at this URL (default, when no signing secret is configured: $AGENT_GATEWAY_BASE_URL, else ${DEFAULT_GATEWAY_URL})`,
      baseUrlOption,
    )
    .option('-c, --config <file>', 'config the agent is looked up in (default: the bundled one)')
    .option(
      '--api-key <key>',
      'mint with this API key instead of a fixture agent, at the running gateway (--base-url or the default; default without an agent: $AGENT_GATEWAY_API_KEY)',
    )
    .addHelpText(
      'after',
      `\nWithout a signing secret (identity.signing_secret in --config, or $AGENT_GATEWAY_SIGNING_SECRET) the token comes from the running gateway, as each gateway process signs with a random secret of its own; with one it is minted here, valid for every gateway using that secret.\n\nExamples:\n  TOKEN=$(npx --no-install agent-gateway token agent-verified)   # from the gateway at ${DEFAULT_GATEWAY_URL} (npm start)\n  npx --no-install agent-gateway token agent-early --base-url http://127.0.0.1:9000\n  AGENT_GATEWAY_API_KEY=ak_... npx --no-install agent-gateway token --base-url https://gateway.example.com\n`,
    )
    .action(async (agentId: string | undefined, options: TokenOptions) => {
      // A key in the environment keeps it off command lines (process lists, CI logs, a --token-command);
      // an agent named on the command line wins over it.
      const apiKey = options.apiKey ?? (agentId ? undefined : process.env.AGENT_GATEWAY_API_KEY || undefined);
      if (!agentId && !apiKey)
        throw new CliError(
          'Name an agent (e.g. agent-early), or pass --api-key (or set AGENT_GATEWAY_API_KEY) to exchange at a running gateway.',
        );
      // A key is exchanged at a running identity provider: the one named, else npm start's.
      if (apiKey) return printRemoteToken(options.baseUrl, apiKey);
      // Only the config and the identity provider load, not the whole gateway (tools, corpus, limits):
      // `token` runs at the start of many scripts and CI steps, and should start fast.
      const [{ loadConfig }, { createClock }, { createAgentRegistry }, { createIdentityProvider }, secrets] =
        await Promise.all([
          import('../../mock-server/config/load-config.ts'),
          import('../../mock-server/clock.ts'),
          import('../../mock-server/identity/agent-registry.ts'),
          import('../../mock-server/identity/identity-provider.ts'),
          import('../../mock-server/identity/signing-secret.ts'),
        ]);
      const config = loadConfig({ file: options.config, config: envConfigOverrides() });
      const named = config.agents.find((a) => a.id === agentId);
      if (!named)
        throw new CliError(
          `No agent "${agentId}" in ${config.source}. Known agents: ${config.agents.map((a) => a.id).join(', ')}.`,
        );
      const secret = config.identity.signing_secret;
      // Without a configured secret each gateway signs with a random one of its own: only it can mint.
      if (options.baseUrl || secret === undefined) return printRemoteToken(options.baseUrl, named.api_key);
      const problem = secrets.signingSecretProblem(secret);
      if (problem) process.stderr.write(`# ${secrets.signingSecretWarning(problem)}\n`);
      // The same identity provider a gateway built from this config has (see createRuntime).
      const registry = createAgentRegistry(config.agents);
      const idp = createIdentityProvider({
        registry,
        clock: createClock(),
        signingSecret: secret,
        issuer: config.identity.issuer,
        ttlSeconds: config.identity.token_ttl_seconds,
      });
      const agent = registry.findByApiKey(named.api_key);
      const minted = idp.mintForApiKey(named.api_key);
      process.stderr.write(
        `# ${minted.agentId} (tier ${agent?.tier}): expires ${new Date(minted.expiresAt).toISOString()}; valid for any gateway using this config's signing secret\n`,
      );
      process.stdout.write(`${minted.token}\n`);
    });
}
