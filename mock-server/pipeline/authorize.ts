import type { CallContext } from '../http/context.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { Policy } from '../policy/policy.ts';
import { noteRefusedCall } from './outgoing-text.ts';
import type { ToolSpec } from './tool-spec.ts';

/** What the authorize stage uses: the policy's decision. */
export interface AuthorizeDeps {
  readonly policy: Pick<Policy, 'authorize'>;
}

/**
 * The authorize stage (spec sections 3 and 5.4): a verified identity outside the tool's tiers and allowlist,
 * or a disabled tool, is 403 access_denied naming the remedy. Allowed calls pass without a tick; a refused
 * one first notes what it tried to send, for the journal.
 */
export function authorize(
  deps: AuthorizeDeps,
  ctx: CallContext,
  identity: Identity,
  spec: ToolSpec,
): undefined | Promise<never> {
  try {
    deps.policy.authorize(identity, spec.tool);
    return undefined;
  } catch (error) {
    return noteRefusedCall(ctx, identity, spec).then(() => {
      throw error;
    });
  }
}
