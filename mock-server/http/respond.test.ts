import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, GatewayError } from '../errors.ts';
import type { AnswerContext } from './respond.ts';
import { respondError } from './respond.ts';

/** What respondError reads of a call: the clock for `Date`, the log, the request id and the journal note. */
function answerContext(lines: string[] = []): AnswerContext {
  return {
    runtime: {
      clock: { now: () => Date.UTC(2026, 0, 1) },
      log: (line: string) => lines.push(line),
      scanSecrets: (text: string) => ({
        redacted: text.replaceAll('ghp_', '[REDACTED:github_token]'),
        kinds: [],
      }),
    },
    requestId: 'req-1',
    note: {},
  } as unknown as AnswerContext;
}

describe('respondError: the one place errors become answers', () => {
  it('a GatewayError answers JSON with code, message, details, request id and extra headers', () => {
    const ctx = answerContext();
    const error = new GatewayError('rate_limited', {
      details: { scope: 'agent' },
      headers: { 'retry-after': '3' },
    });
    const answer = respondError(ctx, error);
    expect(answer.status).toBe(429);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['retry-after']).toBe('3');
    expect(answer.headers['x-request-id']).toBe('req-1');
    expect(JSON.parse(answer.body)).toEqual({
      code: 'rate_limited',
      message: ERROR_CATALOGUE.rate_limited.message,
      scope: 'agent',
      request_id: 'req-1',
    });
    expect(ctx.note.code).toBe('rate_limited');
  });

  it('an unknown exception becomes one logged 500 internal_error that does not leak the exception', () => {
    const lines: string[] = [];
    const answer = respondError(answerContext(lines), new TypeError('secret detail'));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body).code).toBe('internal_error');
    expect(answer.body).not.toContain('secret detail');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('secret detail');
    expect(lines[0]).toContain('req-1');
  });

  it('logs an exception redacted: what it quotes of a request keeps no credential', () => {
    const lines: string[] = [];
    respondError(answerContext(lines), new Error('could not parse {"password": "log-secret-1"} near ghp_'));
    expect(lines[0]).toContain('could not parse');
    expect(lines[0]).not.toMatch(/log-secret-1|ghp_/);
  });
});
