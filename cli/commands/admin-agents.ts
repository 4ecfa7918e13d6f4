import type { Command } from 'commander';
import { adminCall } from '../admin-client.ts';
import { CliError } from '../cli-options.ts';
import { type ConnectionOptions, connected, print, targetOf } from './admin-connection.ts';
import { type AgentView, agentRows, toolList } from './admin-text.ts';

interface AgentOptions extends ConnectionOptions {
  name?: string;
  tier?: string;
  allowlist?: string[];
  apiKey?: string;
  disabled?: boolean;
}

/** `admin agents list | show | create | update | revoke-tokens | token`: the agents of the identity provider. */
export function registerAgents(admin: Command) {
  const agents = admin.command('agents').description('agents of the identity provider');
  const one = (a: AgentView) => agentRows([a]);
  const withFields = (command: Command) =>
    command
      .option('--name <name>', 'display name')
      .option('--tier <tier>', 'policy tier, e.g. early_access or verified')
      .option('--allowlist <tools>', 'tools allowed beyond the tier, comma-separated (empty: none)', toolList)
      .option('--disabled', 'disable the agent (its tokens stop working)')
      .option('--no-disabled', 'enable it again');
  const fields = (o: AgentOptions) => ({
    ...(o.name !== undefined && { name: o.name }),
    ...(o.tier !== undefined && { tier: o.tier }),
    ...(o.allowlist !== undefined && { allowlist: o.allowlist }),
    ...(o.disabled !== undefined && { disabled: o.disabled }),
  });
  const at = (id: string) => `/__admin/agents/${encodeURIComponent(id)}`;

  connected(agents.command('list', { isDefault: true }).description('every agent, with its API key')).action(
    async (options: ConnectionOptions) => {
      const answer = await adminCall<{ agents: AgentView[] }>(targetOf(options), 'GET', '/__admin/agents');
      print(options, answer, (a) => agentRows(a.agents));
    },
  );
  connected(agents.command('show <id>').description('one agent')).action(
    async (id: string, options: ConnectionOptions) => {
      print(options, await adminCall<AgentView>(targetOf(options), 'GET', at(id)), one);
    },
  );
  connected(
    withFields(
      agents.command('create <id>').description('add an agent (tier: the default tier unless given)'),
    ).option('--api-key <key>', 'its API key (default: a random one, printed)'),
  ).action(async (id: string, options: AgentOptions) => {
    const body = { id, ...fields(options), ...(options.apiKey !== undefined && { api_key: options.apiKey }) };
    print(options, await adminCall<AgentView>(targetOf(options), 'POST', '/__admin/agents', body), one);
  });
  connected(
    withFields(agents.command('update <id>').description('change an agent, at once for its tokens')),
  ).action(async (id: string, options: AgentOptions) => {
    const body = fields(options);
    if (Object.keys(body).length === 0)
      throw new CliError('Nothing to change: give --name, --tier, --allowlist, --disabled or --no-disabled.');
    print(options, await adminCall<AgentView>(targetOf(options), 'PATCH', at(id), body), one);
  });
  connected(
    agents.command('revoke-tokens <id>').description('every token the agent holds stops working'),
  ).action(async (id: string, options: ConnectionOptions) => {
    print(
      options,
      await adminCall<AgentView>(targetOf(options), 'POST', `${at(id)}/revoke-tokens`),
      (a) => `Revoked the tokens of ${a.id}.`,
    );
  });
  connected(
    agents.command('token <id>').description('mint a token for the agent (the token is the last line)'),
  ).action(async (id: string, options: ConnectionOptions) => {
    const minted = await adminCall<{ token: string; agent_id: string; expires_at: string }>(
      targetOf(options),
      'POST',
      `${at(id)}/tokens`,
    );
    if (!options.json) process.stderr.write(`Token for ${minted.agent_id}, expires ${minted.expires_at}:\n`);
    print(options, minted, (m) => m.token);
  });
}
