import { parseRetryAfter } from '../../vocabulary/retry-after.ts';
import type { Answer, CallContext } from '../http/context.ts';
import { dropConnection, httpDate } from '../http/respond.ts';
import type { TargetErrorCode } from '../journal/journal.ts';
import { FRAMING_AND_REQUEST_ID } from '../scenarios/replay-headers.ts';
import type { TakenAnswer } from '../scenarios/replay-tracks.ts';

// Headers the adapter writes itself (framing), or that name this gateway's own request: never replayed.
const NOT_REPLAYED = new Set<string>([...FRAMING_AND_REQUEST_ID, 'date']);

/**
 * The replay stage: a recorded answer (a scenario's `replay`) as this gateway's answer to the request, on
 * its clock. Status, headers and body are the recording's; `Date` and the request id are this gateway's;
 * a Retry-After given as an HTTP-date asks for the same wait it did in the recording (its distance from
 * the recorded answer's Date, counted from now). The journal learns the code, the Retry-After and
 * which recorded answer it was (`replay`), as for the gateway's own answers.
 */
export function replayAnswer(ctx: CallContext, taken: TakenAnswer): Answer {
  const { answer } = taken;
  ctx.note.replay = `${taken.agent}#${taken.index}`;
  if (answer.status === 0) return dropConnection();
  const now = ctx.runtime.clock.now();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (!NOT_REPLAYED.has(name)) headers[name] = value;
  headers['x-request-id'] = ctx.requestId;
  headers.date = httpDate(now);
  const retryAfter = headers['retry-after'];
  const parsed = retryAfter === undefined ? undefined : parseRetryAfter(retryAfter);
  if (retryAfter !== undefined && parsed) {
    // An HTTP-date is read against the recorded answer's Date (the recorded gateway's clock, which need not be
    // the recorder's), else against when it was asked.
    const recordedDate = answer.headers.date === undefined ? Number.NaN : Date.parse(answer.headers.date);
    const base = Number.isNaN(recordedDate) ? taken.recordedAt : recordedDate;
    const waitMs = parsed.kind === 'seconds' ? parsed.seconds * 1000 : parsed.date - base;
    if (parsed.kind === 'date') headers['retry-after'] = httpDate(now + Math.max(0, waitMs));
    ctx.note.retry_after = headers['retry-after'];
    ctx.note.retry_after_ms = Math.max(0, waitMs);
  }
  const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.body ?? '');
  const code = (answer.json as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.length <= 100) ctx.note.code = code as TargetErrorCode;
  return { status: answer.status, headers, body };
}
