import { GatewayError } from '../errors.ts';
import { redactCredentials } from '../secrets/credential-redaction.ts';
import type { Answer, CallContext } from './context.ts';

/** What building an answer needs of a call: also all there is for what never became a request. */
export type AnswerContext = Pick<CallContext, 'runtime' | 'requestId' | 'note'>;

/** For answers that must never be cached or replayed by an intermediary: tokens, identities, tool results. */
export const NO_STORE = { 'cache-control': 'no-store' } as const;

let dateSecond = Number.NaN;
let dateText = '';
/**
 * An HTTP-date for a time on the gateway clock, computed once per second (every answer carries one). Every
 * `Date` header comes from here, so a 200 and a 429 read the same clock (a virtual clock when QA moved it).
 */
export function httpDate(at: number): string {
  const second = Math.floor(at / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/**
 * The respond stage: already-serialised JSON (tool results, replays) as an answer with the request id, the
 * gateway clock's `Date`, and extra headers. Every JSON answer of the gateway, errors included, is built
 * here, so every adapter writes the same bytes. `encoded`: the text's UTF-8 bytes when they are known already
 * (a tool answer serialised once: `run-tool.ts`).
 *
 * @example
 * return respondJsonText(ctx, JSON.stringify(result), 200, NO_STORE);
 */
export function respondJsonText(
  ctx: AnswerContext,
  text: string,
  status = 200,
  headers?: Readonly<Record<string, string>>,
  more?: Readonly<Record<string, string>>,
  encoded?: Uint8Array,
): Answer {
  const all: Record<string, string> = {
    'content-type': 'application/json',
    'x-request-id': ctx.requestId,
    date: httpDate(ctx.runtime.clock.now()),
  };
  if (headers) Object.assign(all, headers);
  if (more) Object.assign(all, more);
  return { status, headers: all, body: text, encoded };
}

/** A JSON answer: `body` serialised once. */
export const respondJson = (
  ctx: AnswerContext,
  body: unknown,
  status = 200,
  headers?: Readonly<Record<string, string>>,
  more?: Readonly<Record<string, string>>,
): Answer => respondJsonText(ctx, JSON.stringify(body), status, headers, more);

/** Text that is not JSON (the instruction page), with its content type. */
export function respondText(ctx: CallContext, text: string, contentType: string, headers = {}): Answer {
  return {
    status: 200,
    headers: {
      'content-type': contentType,
      'x-request-id': ctx.requestId,
      date: httpDate(ctx.runtime.clock.now()),
      ...headers,
    },
    body: text,
  };
}

/** A dropped connection (the `drop` fault): no status, no bytes. */
export const dropConnection = (): Answer => ({ status: 0, headers: {}, body: '', drop: true });

/**
 * Maps anything a stage threw to an answer: a GatewayError answers as itself (JSON `{ code, message, ...,
 * request_id }` with its status and headers); anything else becomes one logged 500 `internal_error`,
 * never leaking the exception to the client. The journal note learns the code.
 */
export function respondError(ctx: AnswerContext, error: unknown): Answer {
  let known: GatewayError;
  if (error instanceof GatewayError) known = error;
  else {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    // An exception's message may quote what the request sent: logged redacted, as everything kept.
    const redacted = ctx.runtime.scanSecrets(redactCredentials(detail), {}).redacted;
    ctx.runtime.log(`[${ctx.requestId}] internal_error: ${redacted}`);
    known = new GatewayError('internal_error');
  }
  ctx.note.code = known.code;
  return respondJson(ctx, known.toJSON(ctx.requestId), known.status, known.headers);
}
