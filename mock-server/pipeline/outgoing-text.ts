import { requestKey } from '../client-report/request-meaning.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { CallContext } from './context.ts';
import { tokenOf } from './identify.ts';

/**
 * What a tool call sends out into the world (the search query or the fetch URL), as the journal keeps it:
 * secrets replaced by `[REDACTED:<kind>]`, and which kinds were found (client safety rule 2, spec section 1),
 * also those found only together with the agent's previous query or URL (a secret split across two).
 */
export function noteOutgoingText(ctx: CallContext, identity: Identity, field: 'query' | 'url', text: string) {
  const { redacted, kinds, split } = ctx.runtime.scanSecrets(text, {
    token: tokenOf(ctx),
    agentId: identity.agentId,
    outgoing: true,
  });
  ctx.note[field] = redacted;
  if (kinds.length > 0) ctx.note.secrets = kinds;
  if (split) ctx.note.secrets_split = split;
}

/**
 * What a refused call tried to send (its query or URL), for the journal: an agent that leaks a secret into
 * a call it may not make, or a body that fails validation, leaked it all the same (client rule 2).
 * `bytes` when the body was read already; otherwise it is read now (the call is refused either way).
 */
export async function noteRefusedCall(
  ctx: CallContext,
  identity: Identity,
  field: 'query' | 'url',
  bytes?: Uint8Array,
): Promise<void> {
  try {
    const raw = bytes ?? (await ctx.request.body(ctx.runtime.config.server.max_body_bytes));
    const value = (JSON.parse(Buffer.from(raw).toString('utf8')) as Record<string, unknown>)?.[field];
    if (typeof value === 'string') {
      noteOutgoingText(ctx, identity, field, value);
      // Its meaning, for the rules that recognise a repeat of it; the fields it was refused for are unknown.
      ctx.note.request_key = requestKey(ctx.note.operation ?? 'other', { [field]: value });
    }
  } catch {
    // Unreadable or not JSON: nothing was sent that the journal could show.
  }
}
