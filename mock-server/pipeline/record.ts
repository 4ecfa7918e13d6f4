import type { ResolvedConfig } from '../config/load-config.ts';
import type { Answer, CallContext } from '../http/context.ts';
import { bodyStart, capturedBytes, type ExchangePieces } from '../journal/exchange-capture.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { CapturedExchange } from '../journal/packed-exchange.ts';
import { redactCredentials } from '../secrets/credential-redaction.ts';
import type { StatePort } from '../store/state-port.ts';
import { attributeRequest } from './attribute.ts';
import { entryReadings } from './entry-readings.ts';
import { tokenOf } from './identify.ts';

/** What the record stage uses: how much of each exchange to keep, and the state port's journal. */
export interface RecordDeps {
  readonly config: { readonly journal: Pick<ResolvedConfig['journal'], 'body_bytes'> };
  readonly state: { readonly journal: Pick<StatePort['journal'], 'record'> };
}

/**
 * The record stage: the journal entry of a finished request, once its adapter has written the answer.
 * What the caller chose outside the endpoints' own fields may carry a token or API key: an unrouted path is
 * journaled redacted; an X-Request-Id holding a secret was never taken as the request's id (the core gave it
 * a fresh one). Routed paths are the endpoints' own.
 */
export function recordCall(
  deps: RecordDeps,
  ctx: CallContext,
  status: number,
  answeredAt: number,
  writtenAt: number,
  exchange?: Answer | ExchangePieces,
  encodedBody?: Uint8Array,
): void {
  const { request, note } = ctx;
  const operation = note.operation ?? 'other';
  const connection = request.connection;
  // Named before its readings: they scan for the agent's own token and key.
  if (note.agent === undefined) attributeRequest(ctx);
  const readings = entryReadings(ctx);
  // seq and time first, as the journal lists them; the journal sets them.
  const entry: JournalEntry = {
    seq: 0,
    time: '',
    request_id: ctx.requestId,
    at: ctx.at,
    duration_ms: Math.round((answeredAt - ctx.started) * 100) / 100,
    real_ms: Math.round(ctx.started * 100) / 100,
    written_ms: Math.round(writtenAt * 100) / 100,
    method: request.method,
    path: operation === 'other' ? redacted(ctx, request.path) : request.path,
    operation,
    status,
  };
  // Read at arrival, with `at` (the proxy's requests: when recorded); epoch 0 is left out, as most are.
  const epoch = ctx.epoch ?? ctx.runtime.clock.epoch;
  if (epoch) entry.epoch = epoch;
  if (connection) {
    entry.connection = connection.id;
    entry.connection_opened_ms = Math.round(connection.openedAt * 100) / 100;
  }
  if (request.delivery?.order !== undefined) {
    entry.answers_seen = request.delivery.seen;
    entry.answer_order = request.delivery.order;
  }
  Object.assign(entry, note);
  entry.operation = operation;
  const keep = deps.config.journal.body_bytes;
  // A large body is read at once (rare, bounded by max_body_bytes): an entry waiting for its first reader
  // holds at most DEFERRED_BODY_BYTES of what was sent.
  const atOnce = readings !== undefined && sentBytes(ctx) > DEFERRED_BODY_BYTES;
  if (atOnce) readings.apply(entry);
  deps.state.journal.record(
    entry,
    exchange && keep > 0 ? exchangeOf(ctx, exchange, keep, encodedBody) : undefined,
    atOnce ? undefined : readings,
  );
}

/** The most bytes of a request's body (or characters of its query or URL) its readings wait for a reader with. */
export const DEFERRED_BODY_BYTES = 16 * 1024;

const sentBytes = (ctx: CallContext) =>
  Math.max(ctx.bodyTool ? (ctx.requestBody?.length ?? 0) : 0, ctx.outgoing?.text.length ?? 0);

/**
 * The exchange's headers and the start of its bodies (`journal.body_bytes`): the pieces are taken now (a
 * view of each body, copied into the journal's record); the redaction runs when the entry is first read in
 * memory, at once on a shared store (which must never hold anything unredacted).
 */
function exchangeOf(
  ctx: CallContext,
  exchange: Answer | ExchangePieces,
  keep: number,
  encodedBody?: Uint8Array,
): CapturedExchange {
  const { runtime } = ctx;
  let pieces: ExchangePieces;
  if ('requestHeaders' in exchange) pieces = exchange;
  else {
    const body = ctx.requestBody;
    // Taken past `keep`, so that the redaction sees a credential whole before the body is cut.
    const taken = capturedBytes(keep);
    // The bytes the adapter wrote when it gives them, else the text (encoded when packed).
    const sent = encodedBody ?? exchange.body;
    pieces = {
      requestHeaders: ctx.request.rawHeaders?.() ?? [],
      ...(ctx.request.query ? { query: ctx.request.query } : {}),
      requestBody: body && bodyStart(body, taken),
      requestBodyBytes: body?.length ?? 0,
      responseHeaders: headerList(exchange.headers),
      responseBody: bodyStart(sent, taken),
      // Counted now only when the body is cut (the whole of a short one is kept: counted when redacted).
      responseBodyBytes: sent.length > taken ? Buffer.byteLength(sent) : undefined,
    };
  }
  // The secrets known at the call: a key deleted or registered before the entry is read changes nothing.
  const scan = runtime.scanSecrets.frozen?.() ?? runtime.scanSecrets;
  return new CapturedExchange(pieces, keep, scan, { token: tokenOf(ctx), agentId: ctx.note.agent });
}

/** A header record as a flat name, value list (packed at once: `Object.entries().flat()` costs more). */
function headerList(headers: Readonly<Record<string, string>>): string[] {
  const list: string[] = [];
  for (const name in headers) list.push(name, headers[name] as string);
  return list;
}

/** Text the caller chose, with any token or API key in it redacted, and credentials by place (`;jsessionid=`). */
const redacted = (ctx: CallContext, text: string) =>
  ctx.runtime.scanSecrets(redactCredentials(text), { token: tokenOf(ctx), agentId: ctx.note.agent }).redacted;
