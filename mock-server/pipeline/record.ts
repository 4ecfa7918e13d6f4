import { captureBody, redactHeaderPairs, redactHeaderRecord } from '../exchange-capture.ts';
import type { JournalEntry } from '../journal.ts';
import type { Answer, CallContext } from './context.ts';
import { tokenOf } from './identify.ts';

/**
 * The record stage: the journal entry of a finished request, once its adapter has written the answer.
 * What the caller chose outside the endpoints' own fields may carry a token or API key: an unrouted path is
 * journaled redacted; an X-Request-Id holding a secret was never taken as the request's id (the core gave it
 * a fresh one). Routed paths are the endpoints' own.
 */
export function recordCall(
  ctx: CallContext,
  status: number,
  answeredAt: number,
  writtenAt: number,
  answer?: Answer,
): void {
  const { runtime, request, note } = ctx;
  const keep = runtime.config.journal.body_bytes;
  if (answer && keep > 0 && !note.exchange) note.exchange = exchangeOf(ctx, answer, keep);
  const operation = note.operation ?? 'other';
  const connection = request.connection;
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
  (runtime.shared?.journal ?? runtime.journal).record(entry);
}

/** The exchange's headers and the start of its bodies, redacted (`journal.body_bytes`). */
function exchangeOf(ctx: CallContext, answer: Answer, keep: number): JournalEntry['exchange'] {
  const token = tokenOf(ctx);
  const redact = (text: string) => ctx.runtime.scanSecrets(text, { token, agentId: ctx.note.agent }).redacted;
  const body = ctx.requestBody;
  return {
    request_headers: redactHeaderPairs(ctx.request.rawHeaders?.() ?? [], redact),
    request_body: body ? captureBody(body, keep, redact) : undefined,
    request_body_bytes: body?.length ?? 0,
    response_headers: redactHeaderRecord(answer.headers, redact),
    response_body: captureBody(answer.body, keep, redact),
    response_body_bytes: Buffer.byteLength(answer.body),
  };
}

/** Text the caller chose, with any token or API key in it redacted. */
const redacted = (ctx: CallContext, text: string) =>
  ctx.runtime.scanSecrets(text, { token: tokenOf(ctx), agentId: ctx.note.agent }).redacted;
