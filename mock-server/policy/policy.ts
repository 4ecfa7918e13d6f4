import type { ToolConfig } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import type { Identity } from '../identity/identity-provider.ts';

/**
 * The policy's view of the tool settings, by tool name (the built-in tools and the config's extra ones); the
 * admin API and scenarios may change them at run time.
 */
export type ToolSettings = Record<string, ToolConfig>;

/**
 * Decides which tools an identity may call (spec sections 3 and 5.4): a tool must be enabled, and the
 * agent's tier must be one of the tool's tiers or the tool must be on the agent's allowlist.
 * whoami is not a tool: every valid token may call it.
 */
export function createPolicy(initial: ToolSettings) {
  let tools: ToolSettings = structuredClone(initial);
  const allows = (identity: Identity, tool: string) => {
    const settings = tools[tool];
    if (settings === undefined) return false;
    return settings.enabled && (settings.tiers.includes(identity.tier) || identity.allowlist.includes(tool));
  };

  return {
    /** The current tool settings; change them with `configure` or `updateTool`. */
    get tools(): Readonly<ToolSettings> {
      return tools;
    },
    configure(next: ToolSettings) {
      tools = structuredClone(next);
    },
    /** Changes a declared tool's settings (the caller checks that the tool exists). */
    updateTool(tool: string, patch: Partial<ToolConfig>) {
      const settings = tools[tool];
      if (settings !== undefined) tools[tool] = { ...settings, ...patch };
    },
    /** The tools this identity may call right now, in catalogue order (built-in first, then the config's). */
    allowedTools: (identity: Identity): string[] =>
      Object.keys(tools).filter((tool) => allows(identity, tool)),

    /** Throws 403 access_denied, with a message naming the remedy, when the identity may not call the tool. */
    authorize(identity: Identity, tool: string): void {
      if (allows(identity, tool)) return;
      const settings = tools[tool];
      if (settings === undefined || !settings.enabled) {
        throw new GatewayError('access_denied', {
          message: `${tool} is disabled on this gateway for every agent: use another tool, or ask the operator to enable it.`,
          details: { tool, tier: identity.tier, reason: 'tool_disabled' },
        });
      }
      const needed =
        settings.tiers.length > 0 ? `the ${settings.tiers.join(' or ')} tier` : 'an allowlist entry';
      throw new GatewayError('access_denied', {
        message:
          `Agent ${identity.agentId} (tier ${identity.tier}) may not call ${tool}: it needs ${needed}` +
          `${settings.tiers.length > 0 ? ' or an allowlist entry' : ''}. ` +
          'Request early access or verification from your identity provider.',
        details: { tool, tier: identity.tier, allowed_tiers: settings.tiers, reason: 'tier' },
      });
    },
  };
}

export type Policy = ReturnType<typeof createPolicy>;
