import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { SuiteResponse } from '../model/suite-request.ts';
import { decodeBody } from './decode-body.ts';

/** Longest response body read (bytes); the rest is dropped. */
const MAX_BODY = 1024 * 1024;

/**
 * The suite's transport: one request over node:http(s) on a keep-alive agent, its answer as a
 * SuiteResponse (status 0 and `error` when none came). Headers go out byte for byte as given.
 */
export function createTransport(secure: boolean, timeoutMs: number) {
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 32 })
    : new HttpAgent({ keepAlive: true, maxSockets: 32 });
  const send = (
    url: URL,
    method: string,
    headers: [string, string][],
    body?: string,
  ): Promise<SuiteResponse> =>
    new Promise((resolve) => {
      const request = secure ? httpsRequest : httpRequest;
      const outgoing: Record<string, string> = {};
      for (const [name, value] of headers) outgoing[name] = value;
      if (body !== undefined) outgoing['Content-Length'] = String(Buffer.byteLength(body));
      const req = request(
        url,
        { method, headers: outgoing, agent, timeout: timeoutMs },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY) chunks.push(chunk);
          });
          res.on('end', () => {
            const text = decodeBody(Buffer.concat(chunks), res.headers['content-encoding']);
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            const responseHeaders: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              responseHeaders[name] = Array.isArray(value) ? value.join(', ') : (value ?? '');
            }
            resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text, json });
          });
          res.on('error', (error) =>
            resolve({ status: 0, headers: {}, text: '', json: undefined, error: error.message }),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no response within ${timeoutMs / 1000} s`)));
      req.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ status: 0, headers: {}, text: '', json: undefined, error: error.code ?? error.message }),
      );
      // A Buffer body makes Node write the headers on their own, as latin1, so header bytes go out exactly
      // as given; with a string body it would send headers and body together as UTF-8.
      if (body !== undefined) req.write(Buffer.from(body, 'utf8'));
      req.end();
    });
  return { send, close: () => agent.destroy() };
}
