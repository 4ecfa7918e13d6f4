import type { z } from 'zod';
import type { CallContext } from '../http/context.ts';
import { readSentBody, type SentBody, type SentBodyLabels } from '../http/sent-body.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { JournalNote } from '../journal/journal-entry.ts';
import { redactCredentials } from '../secrets/credential-redaction.ts';
import type { FrozenScan, ScanResult, SecretKind } from '../secrets/secrets.ts';
import { type MeaningOfCalls, requestKey } from '../tools/request-meaning.ts';
import { tokenOf } from './identify.ts';

/**
 * What a tool call sends out into the world (the search query or the fetch URL), as the journal keeps it:
 * secrets replaced by `[REDACTED:<kind>]`, and which kinds were found (client safety rule 2, spec section 1),
 * also those found only together with the agent's previous query or URL (a secret split across two).
 */
export function noteOutgoingText(ctx: CallContext, identity: Identity, field: 'query' | 'url', text: string) {
  const own = { token: tokenOf(ctx), agentId: identity.agentId, outgoing: true };
  const { scanSecrets } = ctx.runtime;
  const scan = scanSecrets.frozen?.();
  if (scan && scanSecrets.outgoing) {
    // On the path, only the memory of split secrets moves on (texts in the order they are sent); the scan
    // and the redaction are made when the entry is first read, before anyone sees it (`entry-readings.ts`).
    const before = scanSecrets.outgoing(text, own);
    ctx.outgoing = before === undefined ? { field, text, own, scan } : { field, text, own, before, scan };
    return;
  }
  addOutgoingText(ctx.note, field, scanSecrets(text, own));
}

/**
 * An outgoing text's scan into a note or entry: the text with its secrets and its credentials by place
 * (`?api_key=...`, `https://user:pass@`) redacted (the journal is shared as it is), what was found, and the
 * kinds found only together with the agent's previous text.
 */
export function addOutgoingText(
  notes: Pick<JournalNote, 'query' | 'url' | 'secrets' | 'secrets_in' | 'secrets_split'>,
  field: 'query' | 'url',
  { redacted, kinds, split }: ScanResult,
): void {
  notes[field] = redactCredentials(redacted);
  if (kinds.length > 0) addFound(notes, field, kinds);
  if (split) notes.secrets_split = split;
}

/** Where secrets are noted: a request's journal note, or its entry (readings made when it is read). */
type SecretNotes = Pick<JournalNote, 'secrets' | 'secrets_in'>;

/** Adds kinds of secrets found at a place to a note or entry: the kinds once each, the places in order. */
export function addFound(notes: SecretNotes, place: string, kinds: readonly SecretKind[]) {
  const known = notes.secrets ?? [];
  notes.secrets = [...known, ...kinds.filter((kind) => !known.includes(kind))];
  notes.secrets_in = [...(notes.secrets_in ?? []), place];
}

// No secret the scan knows is shorter than this (its literals and pieces have 8 characters or more).
export const SHORTEST_SECRET = 8;
// Strings of one body scanned at most (a body is at most max_body_bytes; this bounds the work on odd ones).
const MOST_BODY_STRINGS = 256;

/** A name the agent chose (a body key, a header name), as the journal may show it in a place. */
const PLAIN_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Text the agent chose, fit to name a place in the journal: as sent when it is a short plain name holding
 * no secret, otherwise by its position (`#3`): a place is named, never a text the agent sent repeated
 * (a key holding the token would put it in `secrets_in` and the client report).
 */
export function placeNameWith(scan: FrozenScan, own: ScanOwner, name: string, position: number): string {
  if (PLAIN_NAME.test(name) && scan(name, own).kinds.length === 0) return name;
  return `#${position + 1}`;
}

/** Whose secrets a scan looks for: the caller's token and agent. */
export type ScanOwner = { token?: string; agentId?: string };

/**
 * Secrets in every string of a parsed body but the tool's own field (scanned as the query or URL): nested
 * fields, array items and object keys alike, each named `body.<path>` (a key that is not a short plain name
 * is named by its position, `body.#2`). The path is spelled out only for a string holding a secret.
 */
export function noteBodySecrets(ctx: CallContext, body: unknown, field: string | undefined): void {
  const own = { token: tokenOf(ctx), agentId: ctx.note.agent };
  addBodySecrets(ctx.note, ctx.runtime.scanSecrets, own, body, field);
}

/** `noteBodySecrets` into a note or entry, with a given scan and caller (a reading made after the request). */
export function addBodySecrets(
  notes: SecretNotes,
  scanSecrets: FrozenScan,
  own: ScanOwner,
  body: unknown,
  field: string | undefined,
): void {
  let budget = MOST_BODY_STRINGS;
  type Step = { key: string; position: number } | number;
  const pathOf = (steps: readonly Step[], key?: Step) =>
    [...steps, ...(key === undefined ? [] : [key])].reduce<string>(
      (path, step) =>
        typeof step === 'number'
          ? `${path}[${step}]`
          : `${path}.${placeNameWith(scanSecrets, own, step.key, step.position)}`,
      'body',
    );
  const scan = (text: string, steps: readonly Step[], isKey: boolean) => {
    budget--;
    if (text.length < SHORTEST_SECRET) return;
    const { kinds } = scanSecrets(text, own);
    if (kinds.length > 0) addFound(notes, isKey ? `${pathOf(steps)} (a key)` : pathOf(steps), kinds);
  };
  const walk = (value: unknown, steps: Step[], depth: number) => {
    if (budget <= 0 || depth > 16) return;
    if (typeof value === 'string') {
      const [top] = steps;
      if (steps.length === 1 && typeof top === 'object' && top.key === field) budget--;
      else scan(value, steps, false);
    } else if (Array.isArray(value)) {
      for (const [k, item] of value.entries()) walk(item, [...steps, k], depth + 1);
    } else if (value !== null && typeof value === 'object')
      for (const [position, [key, item]] of Object.entries(value).entries()) {
        if (budget <= 0) return;
        scan(key, steps, true);
        walk(item, [...steps, { key, position }], depth + 1);
      }
  };
  walk(body, [], 0);
}

/** The Content-Type and Content-Encoding a call labelled its body with; `decoded`: the codings are undone already. */
export const bodyLabels = (ctx: CallContext, decoded = false): SentBodyLabels => ({
  contentType: ctx.request.header('content-type'),
  contentEncoding: decoded ? undefined : ctx.request.header('content-encoding'),
});

/**
 * What a refused call tried to send, for the journal: an agent that leaks a secret into a call it may not
 * make, or into a body that is refused (not JSON: a form, text, multipart; compressed; failing validation),
 * leaked it all the same (client rule 2). `sent` when the body was read already (`decoded`: its codings
 * undone); otherwise it is read now (the call is refused either way).
 */
export async function noteRefusedCall(
  ctx: CallContext,
  identity: Identity,
  tool: SentBodyTool,
  sent?: { readonly bytes: Uint8Array; readonly decoded: boolean },
): Promise<void> {
  const max = ctx.runtime.config.server.max_body_bytes;
  let bytes: Uint8Array;
  try {
    bytes = sent?.bytes ?? (await ctx.request.body(max));
  } catch {
    return; // Too large (413) or cut short (400): its answer says so; nothing was read.
  }
  noteSentBody(ctx, identity, tool, readSentBody(bytes, bodyLabels(ctx, sent?.decoded), max), [
    ctx.at,
    Date.now(),
  ]);
}

/**
 * What the journal learns of a body as the one reader read it (`http/sent-body.ts`): a body that could not be
 * read (`body_unread`, a finding of the client report), the secrets in every string it holds, and, when it
 * is an object, the tool's query or URL and its meaning (for the rules that recognise a repeat of it).
 */
export function noteSentBody(
  ctx: CallContext,
  identity: Identity,
  tool: SentBodyTool,
  sent: SentBody,
  near?: readonly number[],
): void {
  if (sent.unreadable !== undefined) ctx.note.body_unread = sent.unreadable;
  const { value } = sent;
  if (value === undefined) return;
  const { field } = tool;
  noteBodySecrets(ctx, value, field);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  // Its meaning as the tool's schema reads it (defaults filled in, as an accepted call's), else what it sent.
  const parsed = tool.schema.safeParse(value);
  const body = (parsed.success ? parsed.data : value) as Record<string, unknown>;
  if (field === undefined) {
    // A tool without such a field (a config's extra tool): its meaning is in the body as a whole.
    ctx.note.request_key = requestKey(tool.meaning, body, near);
    return;
  }
  const text = (value as Record<string, unknown>)[field];
  if (typeof text !== 'string') return;
  noteOutgoingText(ctx, identity, field, text);
  // A body refused for another field: its meaning is its query or URL (the fields refused are unknown).
  ctx.note.request_key = requestKey(tool.meaning, parsed.success ? body : { [field]: text }, near);
}

/** What `noteSentBody` needs of a tool: its outgoing field, its body's schema, its meaning. */
export interface SentBodyTool {
  readonly field?: 'query' | 'url' | undefined;
  readonly schema: z.ZodType;
  readonly meaning: MeaningOfCalls;
}
