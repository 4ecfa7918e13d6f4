import type { CallContext } from './context.ts';
import { tokenOf } from './identify.ts';

/**
 * The record stage: the journal entry of a finished request, once its adapter has written the answer.
 * What the caller chose outside the endpoints' own fields (an unrouted path, its own X-Request-Id) may carry
 * a token or API key: the journal keeps them redacted. Routed paths are the endpoints' own; generated ids
 * are UUIDs.
 */
export function recordCall(ctx: CallContext, status: number, answeredAt: number, writtenAt: number): void {
  const { runtime, request, note } = ctx;
  const { operation = 'other', ...learned } = note;
  const redact = (text: string) =>
    runtime.scanSecrets(text, { token: tokenOf(ctx), agentId: learned.agent }).redacted;
  const connection = request.connection;
  runtime.journal.record({
    request_id: request.header('x-request-id') !== undefined ? redact(ctx.requestId) : ctx.requestId,
    at: ctx.at,
    duration_ms: Math.round((answeredAt - ctx.started) * 100) / 100,
    real_ms: Math.round(ctx.started * 100) / 100,
    written_ms: Math.round(writtenAt * 100) / 100,
    ...(connection
      ? { connection: connection.id, connection_opened_ms: Math.round(connection.openedAt * 100) / 100 }
      : {}),
    method: request.method,
    path: operation === 'other' ? redact(request.path) : request.path,
    operation,
    status,
    ...learned,
  });
}
