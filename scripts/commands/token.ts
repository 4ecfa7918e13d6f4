import type { Command } from 'commander';
import { loadConfig } from '../../mock-server/config/load-config.ts';
import { createGateway } from '../../mock-server/gateway.ts';
import { signingSecretProblem, signingSecretWarning } from '../../mock-server/identity/signing-secret.ts';
import { baseUrlOption, CliError, envConfigOverrides } from '../cli-options.ts';

/** Where `npm start` (and `agent-gateway serve` without options) listens. */
export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8787';

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
      'mint with this API key instead of a fixture agent (at the running gateway: --base-url or the default)',
    )
    .addHelpText(
      'after',
      `\nWithout a signing secret (identity.signing_secret in --config, or $AGENT_GATEWAY_SIGNING_SECRET) the token comes from the running gateway, as each gateway process signs with a random secret of its own; with one it is minted here, valid for every gateway using that secret.\n\nExamples:\n  TOKEN=$(npx agent-gateway token agent-verified)          # from the gateway at ${DEFAULT_GATEWAY_URL} (npm start)\n  npx agent-gateway token agent-early --base-url http://127.0.0.1:9000\n`,
    )
    .action(async (agentId: string | undefined, options: TokenOptions) => {
      if (!agentId && !options.apiKey)
        throw new CliError('Name an agent (e.g. agent-early) or pass --api-key.');
      const config = loadConfig({ file: options.config, config: envConfigOverrides() });
      const secret = config.identity.signing_secret;
      let apiKey = options.apiKey;
      if (!apiKey) {
        const agent = config.agents.find((a) => a.id === agentId);
        if (!agent)
          throw new CliError(
            `No agent "${agentId}" in ${config.source}. Known agents: ${config.agents.map((a) => a.id).join(', ')}.`,
          );
        apiKey = agent.api_key;
      }
      if (options.baseUrl || options.apiKey || secret === undefined) {
        const implicit = !options.baseUrl;
        const baseUrl = options.baseUrl ?? defaultGatewayUrl();
        const minted = await mintRemotely(baseUrl, apiKey, implicit);
        process.stderr.write(
          `# ${minted.agent_id}: token from the gateway at ${baseUrl}, expires ${minted.expires_at}\n`,
        );
        process.stdout.write(`${minted.token}\n`);
        return;
      }
      const problem = signingSecretProblem(secret);
      if (problem) process.stderr.write(`# ${signingSecretWarning(problem)}\n`);
      const gateway = createGateway({ config });
      const agent = gateway.registry.findByApiKey(apiKey);
      const minted = gateway.idp.mintForApiKey(apiKey);
      process.stderr.write(
        `# ${minted.agentId} (tier ${agent?.tier}): expires ${new Date(minted.expiresAt).toISOString()}; valid for any gateway using this config's signing secret\n`,
      );
      process.stdout.write(`${minted.token}\n`);
    });
}
