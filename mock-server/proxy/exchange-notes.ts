import { ENDPOINTS, type JournalOperation } from '../../vocabulary/endpoints.ts';
import { journalFingerprint } from '../hash.ts';
import type { CallContext } from '../http/context.ts';
import { readSentBody } from '../http/sent-body.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { bodyLabels, noteSentBody } from '../pipeline/outgoing-text.ts';
import { type AnyToolDefinition, BUILT_IN_TOOLS } from '../tools/index.ts';
import type { Collector } from './wire.ts';

/*
 * What the proxy's journal learns of an exchange it forwarded: the operation, the request's meaning, the agent
 * a whoami names, the code of an error.
 */

// The endpoints the proxy names by path (the instruction page by its prefix, below; anything else is other).
const OPERATIONS: ReadonlyMap<string, JournalOperation> = new Map(
  (['health', 'whoami', 'idp.token', 'idp.verify'] as const).map((id) => [ENDPOINTS[id].path, id]),
);
/** Bytes of a request body read for its meaning (fingerprint, key, query/url), and of an error body judged. */
export const ANALYSED_BYTES = 65_536;

/** The tool of that name among `tools` (the proxy's config's: the built-in ones and its extra ones). */
export const toolNamed = (tools: readonly AnyToolDefinition[], operation: string) =>
  tools.find((tool) => tool.name === operation);

/** The endpoint a path calls: a tool of `tools` by its path, another endpoint of the spec, or other. */
export const operationOf = (
  path: string,
  tools: readonly AnyToolDefinition[] = BUILT_IN_TOOLS,
): JournalOperation =>
  tools.find((tool) => tool.vocabulary.path === path)?.name ??
  OPERATIONS.get(path) ??
  (path === '/idp/auth' || path.startsWith('/idp/auth.') ? 'idp.auth' : 'other');

/** The agent id in a whoami body, whatever the gateway names the field (the spec does not show it). */
export function agentIdOf(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  for (const holder of [record.agent, record.identity, record.caller, record]) {
    if (typeof holder !== 'object' || holder === null) continue;
    const h = holder as Record<string, unknown>;
    for (const key of ['id', 'agent_id', 'agentId', 'sub', 'client_id', 'name'])
      if (typeof h[key] === 'string' && h[key] !== '' && (h[key] as string).length <= 200)
        return h[key] as string;
  }
  if (typeof record.agent === 'string' && record.agent !== '') return record.agent;
  return undefined;
}

export const codeOf = (text: string | undefined): string | undefined => {
  if (text === undefined) return undefined;
  try {
    const body = JSON.parse(text) as { code?: unknown };
    return typeof body?.code === 'string' && body.code.length <= 100 ? body.code : undefined;
  } catch {
    return undefined;
  }
};

/**
 * What the journal learns of a request from its body: as the gateway's tool stages note it, read by the one
 * reader of sent bodies (any content type, charset and content coding: `http/sent-body.ts`).
 */
export function noteRequest(
  ctx: CallContext,
  operation: JournalOperation,
  body: Collector,
  tools: readonly AnyToolDefinition[] = BUILT_IN_TOOLS,
): void {
  if (operation === 'whoami') ctx.note.request_fingerprint = journalFingerprint('whoami');
  const tool = toolNamed(tools, operation);
  if (!tool) return;
  if (!body.whole) {
    ctx.note.request_fingerprint = journalFingerprint(operation);
    return;
  }
  const sent = readSentBody(body.bytes(), bodyLabels(ctx), ANALYSED_BYTES);
  // The fingerprint of the body as the gateway parses it: its codings undone.
  ctx.note.request_fingerprint = journalFingerprint(operation, sent.decoded ?? body.bytes());
  const spec = { field: tool.journalField, schema: tool.request.schema, meaning: tool };
  noteSentBody(ctx, { agentId: ctx.note.agent } as Identity, spec, sent);
}
