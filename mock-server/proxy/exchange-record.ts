import type { IncomingMessage } from 'node:http';
import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../vocabulary/retry-after.ts';
import type { Gateway } from '../gateway.ts';
import type { CallContext } from '../http/context.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { judgeAnswer } from '../journal/answer-findings.ts';
import { bodyStart, capturedBytes, type ExchangePieces, redactText } from '../journal/exchange-capture.ts';
import type { TargetErrorCode } from '../journal/journal.ts';
import { recordCall } from '../pipeline/record.ts';
import { noteTurns } from '../pipeline/turn-facts.ts';
import type { IsCredentialName } from '../secrets/credential-names.ts';
import type { createAgentNames } from './agent-names.ts';
import { agentIdOf, codeOf, noteRequest } from './exchange-notes.ts';
import { type Collector, endToEnd, headerOf } from './wire.ts';

/** What the journal entry of one proxied exchange is made from. */
export interface ExchangeRecordParts {
  /** The proxy's own gateway's runtime (journal, clock, config). */
  runtime: Gateway['runtime'];
  ctx: { -readonly [K in keyof CallContext]: CallContext[K] };
  names: ReturnType<typeof createAgentNames>;
  /** The identity header's token, trimmed; undefined when absent or blank. */
  token: string | undefined;
  /** Set when this exchange is the whoami that names its token's agent. */
  namedByThis: () => ((name: string) => void) | undefined;
  requestBody: Collector;
  /** The request's headers as journaled (the proxy's admin key already kept back). */
  requestHeaders: readonly string[];
  /** `journal.body_bytes`. */
  keep: number;
  httpVersion: IncomingMessage['httpVersion'];
  isCredential: IsCredentialName;
  /** Called with the status and the answer's text (when read whole) before the request's meaning is noted. */
  onRecord?: (status: number, responseText: string | undefined) => void;
}

/**
 * The proxy's journal entry of an exchange, once its answer is written (or the connection is gone): the
 * agent named, the target's code, Retry-After and request id, the findings judged on the target's answer,
 * and the pieces the journal redacts when read.
 */
export function createExchangeRecord(parts: ExchangeRecordParts) {
  const { ctx, names, token, requestBody, requestHeaders, keep, httpVersion, isCredential } = parts;
  const { runtime } = parts;
  const { request } = ctx;
  // The target's own texts the notes keep (its code, Retry-After, request id, what the findings quote).
  const kept = (text: string) => redactText(text, (t) => runtime.scanSecrets(t, {}).redacted, isCredential);
  const operation = ctx.note.operation ?? 'other';
  return (
    status: number,
    answeredAt: number,
    answer: { raw: readonly string[]; body?: Collector; text?: string },
    writtenAt = performance.now(),
    writtenTurn?: number,
  ) => {
    const { note } = ctx;
    const responseText =
      answer.text ?? (answer.body?.whole ? answer.body.bytes().toString('utf8') : undefined);
    const namedByThis = parts.namedByThis();
    if (namedByThis && token) {
      const ok = status >= 200 && status < 300 && note.fault === undefined;
      const connection = request.connection?.id;
      note.agent =
        (ok && responseText !== undefined && agentIdOf(responseText)) ||
        (connection !== undefined && names.byConnection.get(connection)) ||
        tokenFingerprint(token);
      namedByThis(note.agent);
    }
    // Only an answer the target gave to a token it accepted ties the connection to the agent.
    if (
      token &&
      note.agent &&
      status >= 200 &&
      status < 400 &&
      request.connection &&
      note.fault === undefined
    )
      names.byConnection.set(request.connection.id, note.agent);
    parts.onRecord?.(status, responseText);
    noteRequest(ctx, operation, requestBody, runtime.tools);
    if (status >= 400) {
      const code = codeOf(responseText);
      if (code) note.code = kept(code) as TargetErrorCode;
    }
    const retryAfter = headerOf(answer.raw, 'retry-after');
    if (retryAfter !== undefined && note.retry_after === undefined) {
      note.retry_after = kept(retryAfter);
      const parsed = parseRetryAfter(retryAfter);
      if (parsed)
        note.retry_after_ms = retryAfterDelayMs(parsed, headerOf(answer.raw, 'date'), runtime.clock.now());
    }
    if (note.fault === undefined && status !== 0) {
      const targetId = headerOf(answer.raw, 'x-request-id');
      if (targetId) {
        note.target_request_id = kept(targetId);
        ctx.requestId = note.target_request_id;
      }
      const lower: Record<string, string> = {};
      for (let i = 0; i + 1 < answer.raw.length; i += 2)
        lower[(answer.raw[i] as string).toLowerCase()] ??= answer.raw[i + 1] as string;
      const findings = judgeAnswer({
        operation,
        method: request.method,
        status,
        headers: lower,
        body: responseText,
        token:
          token !== undefined
            ? 'present'
            : request.header(IDENTITY_HEADER_KEY) === undefined
              ? 'absent'
              : 'blank',
        requestBody: requestBody.whole ? requestBody.bytes().toString('utf8') : undefined,
      });
      if (findings.length > 0) note.findings = findings.map((f) => ({ ...f, detail: kept(f.detail) }));
    }
    const raw = answer.raw;
    // Taken past `keep`: the redaction sees a credential whole before the body is cut to `keep`.
    const taken = capturedBytes(keep);
    const pieces: ExchangePieces | undefined =
      keep > 0
        ? {
            requestHeaders,
            ...(request.query ? { query: request.query } : {}),
            requestBody: bodyStart(requestBody.bytes(), taken),
            requestBodyBytes: requestBody.total,
            get responseHeaders() {
              return endToEnd(raw);
            },
            responseBody:
              answer.text !== undefined
                ? bodyStart(answer.text, taken)
                : answer.body && bodyStart(answer.body.bytes(), taken),
            responseBodyBytes:
              answer.text !== undefined ? Buffer.byteLength(answer.text) : (answer.body?.total ?? 0),
            httpVersion,
            isCredential,
          }
        : undefined;
    // The turn facts and the loop's stalls, as the gateway's entries carry them, so the client report reads
    // them alike on both paths: the proxy writes its agent's answers itself, so the turn it wrote one in
    // (`writtenTurn`, when in the loop's I/O phase) says which of its agents' requests read in that turn were
    // on their way before it.
    noteTurns(ctx, writtenTurn);
    recordCall(runtime, ctx, status, answeredAt, writtenAt, pieces);
  };
}
