import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.ts';
import { readJsonBody } from '../../http/read-body.ts';
import type { Agent } from '../../identity/agent-registry.ts';
import { agentCreateSchema, agentPatchSchema, toolPatchSchema } from '../admin-schemas.ts';
import type { AdminKit } from './admin-kit.ts';

const showAgent = (agent: Agent) => ({
  id: agent.id,
  name: agent.name,
  api_key: agent.apiKey,
  tier: agent.tier,
  allowlist: agent.allowlist,
  disabled: agent.disabled,
  token_generation: agent.tokenGeneration,
});

/** The agents (the transitions the spec leaves unshown), the tools' policies and the rate limits in force. */
export function registerAgentAdmin(kit: AdminKit) {
  const { route, ok, admin, runtime, registry, maxBody, checkTier, checkAllowlist, agentOr404, noAgent } =
    kit;
  route('listAgents', (ctx) => ok(ctx, { agents: registry.list().map(showAgent) }));
  route('createAgent', async (ctx) => {
    const body = await readJsonBody(ctx.request, agentCreateSchema, maxBody());
    checkTier(body.tier);
    checkAllowlist(body.allowlist);
    const apiKey = body.api_key ?? `ak_${randomBytes(12).toString('hex')}`;
    const created = await admin.createAgent({
      id: body.id,
      name: body.name ?? body.id,
      apiKey,
      tier: body.tier ?? runtime.config.default_tier,
      allowlist: body.allowlist ?? [],
      disabled: body.disabled ?? false,
    });
    if (created === 'id_taken')
      throw new GatewayError('already_exists', { message: `Agent "${body.id}" already exists.` });
    if (created === 'key_taken')
      throw new GatewayError('already_exists', { message: 'That api_key is already used.' });
    return ok(ctx, showAgent(agentOr404(body.id)), 201);
  });
  route('getAgent', (ctx, params) => ok(ctx, showAgent(agentOr404(params.id as string))));
  route('updateAgent', async (ctx, params) => {
    const id = params.id as string;
    const body = await readJsonBody(ctx.request, agentPatchSchema, maxBody());
    checkTier(body.tier);
    checkAllowlist(body.allowlist);
    // False: no such agent where the change is made (a shared store that lost an agent this instance
    // holds answers 503 instead); never a fallback to this instance's copy.
    if (!(await admin.updateAgent(id, body))) throw noAgent(id);
    return ok(ctx, showAgent(agentOr404(id)));
  });
  route('revokeTokens', async (ctx, params) => {
    const id = params.id as string;
    if (!(await admin.revokeTokens(id))) throw noAgent(id);
    return ok(ctx, showAgent(agentOr404(id)));
  });
  route('mintToken', (ctx, params) => {
    // Never mint with a secret the other instances may not hold (shared store in conflict: 503).
    const refusal = runtime.state.refusal();
    if (refusal) throw refusal;
    const minted = runtime.idp.mintForAgent(agentOr404(params.id as string).id);
    return ok(
      ctx,
      { token: minted.token, agent_id: minted.agentId, expires_at: new Date(minted.expiresAt).toISOString() },
      201,
    );
  });

  route('listTools', (ctx) => ok(ctx, { tools: runtime.policy.tools }));
  route('updateTool', async (ctx, params) => {
    const tool = params.tool as string;
    if (!Object.hasOwn(runtime.policy.tools, tool))
      throw new GatewayError('not_found', {
        message: `No tool "${tool}" (tools: ${Object.keys(runtime.policy.tools).join(', ')}).`,
      });
    const body = await readJsonBody(ctx.request, toolPatchSchema, maxBody());
    for (const tier of body.tiers ?? []) checkTier(tier);
    await admin.updateTool(tool, body);
    return ok(ctx, { tool, ...runtime.policy.tools[tool] });
  });

  route('getLimits', (ctx) => ok(ctx, runtime.config.rate_limits));
}
