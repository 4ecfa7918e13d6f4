import { ENDPOINTS, type JournalOperation } from '../../vocabulary/endpoints.ts';
import { TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { requestKey } from '../client-report/request-meaning.ts';
import { journalFingerprint } from '../hash.ts';
import type { CallContext } from '../http/context.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { noteBodySecrets, noteOutgoingText } from '../pipeline/outgoing-text.ts';
import type { Collector } from './wire.ts';

/*
 * What the proxy's journal learns of an exchange it forwarded: the operation, the request's meaning, the agent
 * a whoami names, the code of an error.
 */

// The endpoints the proxy names by path (the instruction page by its prefix, below; anything else is other).
const OPERATIONS: ReadonlyMap<string, JournalOperation> = new Map(
  (['health', 'whoami', ...TOOL_NAMES, 'idp.token', 'idp.verify'] as const).map((id) => [
    ENDPOINTS[id].path,
    id,
  ]),
);
export const TOOL_FIELD: Readonly<Record<string, 'query' | 'url'>> = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, TOOLS[tool].field]),
);
/** Bytes of a request body read for its meaning (fingerprint, key, query/url), and of an error body judged. */
export const ANALYSED_BYTES = 65_536;

export const operationOf = (path: string): JournalOperation =>
  OPERATIONS.get(path) ?? (path === '/idp/auth' || path.startsWith('/idp/auth.') ? 'idp.auth' : 'other');

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

/** What the journal learns of a request from its body: as the gateway's tool stages note it. */
export function noteRequest(ctx: CallContext, operation: JournalOperation, body: Collector): void {
  const field = TOOL_FIELD[operation];
  if (operation === 'whoami') ctx.note.request_fingerprint = journalFingerprint('whoami');
  if (!field) return;
  const bytes = body.bytes();
  ctx.note.request_fingerprint = body.whole
    ? journalFingerprint(operation, bytes)
    : journalFingerprint(operation);
  if (!body.whole) return;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  // Every other string of the body leaves the agent too, as the gateway's body stage scans it.
  noteBodySecrets(ctx, value, field);
  const text = (value as Record<string, unknown>)[field];
  if (typeof text !== 'string') return;
  ctx.note.request_key = requestKey(operation, value as Record<string, unknown>);
  noteOutgoingText(ctx, { agentId: ctx.note.agent } as Identity, field, text);
}
