import { ERROR_CATALOGUE, type ErrorCode } from '../mock-server/errors.ts';
import type { Answer, Outcome } from './fuzz-senders.ts';

/* The property every answer of a fuzz run must have, and how a failing request is shown. */

/** What is wrong with an answer (undefined: nothing). */
export function answerViolation(answer: Answer): string | undefined {
  if (answer.body === '\u0000no content-length') return 'no Content-Length: the answer cannot be delimited';
  if (!Number.isInteger(answer.status)) return 'not an HTTP/1.1 status line';
  if (answer.status >= 500) return `a ${answer.status} with no fault armed`;
  if (!answer.headers['x-request-id']) return 'no X-Request-Id';
  if (!answer.headers.date) return 'no Date';
  if (answer.status < 400) return undefined;
  if (!/^application\/(?:[\w.+-]+\+)?json/.test(answer.headers['content-type'] ?? ''))
    return `an error labelled ${answer.headers['content-type'] ?? '(no content type)'}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return answer.body === '' ? 'an error without a body (HEAD aside)' : 'an error body that is not JSON';
  }
  const code = (body as { code?: unknown })?.code;
  if (typeof code !== 'string' || !Object.hasOwn(ERROR_CATALOGUE, code))
    return `code ${JSON.stringify(code)} is not in the catalogue`;
  if (ERROR_CATALOGUE[code as ErrorCode].status !== answer.status)
    return `code ${code} answered with ${answer.status}, not ${ERROR_CATALOGUE[code as ErrorCode].status}`;
  if ((body as { request_id?: unknown }).request_id !== answer.headers['x-request-id'])
    return 'request_id differs from X-Request-Id';
  return undefined;
}

/**
 * Everything wrong with what a request got. Only bytes that hold no request (blank lines) may go unanswered;
 * the first answer to a HEAD has no body to judge, only its status and headers.
 */
export function outcomeViolations(outcome: Outcome, method: string, rawBytes?: string): string[] {
  const problems: string[] = [];
  if (outcome.answers.length === 0 && !(rawBytes !== undefined && rawBytes.trim() === ''))
    problems.push(`no answer (${outcome.missing})`);
  outcome.answers.forEach((answer, i) => {
    const problem = method === 'HEAD' && i === 0 ? headViolation(answer) : answerViolation(answer);
    if (problem) problems.push(`${answer.status}: ${problem}`);
  });
  return problems;
}

function headViolation(answer: Answer): string | undefined {
  if (answer.status >= 500) return `a ${answer.status} with no fault armed`;
  if (!answer.headers['x-request-id']) return 'no X-Request-Id';
  if (!answer.headers.date) return 'no Date';
  if (answer.status >= 400 && !/^application\/json/.test(answer.headers['content-type'] ?? ''))
    return 'an error not labelled JSON';
  return undefined;
}

/** A request as a reader can see it: control and non-ASCII bytes escaped, long runs cut. */
export function showRequest(bytes: string): string {
  const escaped = JSON.stringify(bytes).slice(1, -1);
  return escaped.length > 400 ? `${escaped.slice(0, 400)}… (${bytes.length} bytes)` : escaped;
}
