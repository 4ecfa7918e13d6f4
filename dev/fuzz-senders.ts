import { connect } from 'node:net';
import type { FetchRequest, RawRequest } from './fuzz-requests.ts';

/* Sending a fuzz request, over a raw socket or fetch, and reading back what came. Loopback only. */

/** One answer as received. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a request got: its answers (more than one when requests were pipelined), or why none came. */
export interface Outcome {
  answers: Answer[];
  /** Set when no complete answer came: `closed` (the connection closed first), `timeout`, or an error code. */
  missing?: string;
}

/** Parses the complete answers at the start of `data`; the rest is incomplete. HEAD answers have no body. */
function parseAnswers(data: Buffer, method: string): Answer[] {
  const answers: Answer[] = [];
  let offset = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end === -1) return answers;
    const [statusLine = '', ...lines] = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    const length =
      method === 'HEAD' && answers.length === 0 ? 0 : Number(headers['content-length'] ?? Number.NaN);
    // Without Content-Length (never sent by the gateway) the answer is incomplete until judged otherwise.
    if (!Number.isInteger(length) || data.length < bodyStart + length) {
      if (!Number.isInteger(length)) answers.push({ status, headers, body: '\u0000no content-length' });
      return answers;
    }
    answers.push({ status, headers, body: data.subarray(bodyStart, bodyStart + length).toString('utf8') });
    bodyStart += length;
    offset = bodyStart;
  }
}

/**
 * Sends raw bytes on a fresh connection and collects the answers until the server closes it (or, once the
 * first answer is complete, for a client that keeps its side open). `deadlineMs` bounds the wait.
 */
export function sendRaw(port: number, request: RawRequest, deadlineMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (missing?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const answers = parseAnswers(data, request.method);
      resolve(answers.length > 0 ? { answers } : { answers, missing: missing ?? 'closed' });
    };
    const timer = setTimeout(() => finish('timeout'), deadlineMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      // A client that keeps its side open stops at its first complete answer, as a real one would.
      if (!request.halfClose && parseAnswers(data, request.method).length > 0) finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? 'error'));
    socket.on('close', () => finish());
    socket.once('connect', () => {
      socket.write(Buffer.from(request.bytes, 'latin1'));
      if (request.halfClose) socket.end();
    });
  });
}

/** Sends a request with fetch (undici); a network error is an outcome without an answer. */
export async function sendFetch(
  baseUrl: string,
  request: FetchRequest,
  deadlineMs: number,
): Promise<Outcome> {
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(deadlineMs),
    });
    const body = await response.text();
    return { answers: [{ status: response.status, headers: Object.fromEntries(response.headers), body }] };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { answers: [], missing: cause ?? (error as Error).name };
  }
}
