import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer, GatewayRequest, GatewayResponse } from '../http/context.ts';
import { writeSlices } from '../journal/write-slices.ts';
import { turnIfAnsweredAtOnce } from '../pipeline/turn-facts.ts';
import type { createExchangeRecord } from './exchange-record.ts';
import type { Collector } from './wire.ts';

/**
 * Writes an answer the proxy makes itself (admin API, fault, unreachable target): dropped, streamed slice by
 * slice with backpressure (a long admin answer: the journal export), or whole. Resolves, once written, with
 * when it was handed to the socket (what the journal records).
 */
export function writeOwn(res: ServerResponse, answer: GatewayResponse | Answer): Promise<number> {
  return new Promise((resolve) => {
    if (answer.drop) {
      res.req.socket.destroy();
      resolve(performance.now());
      return;
    }
    if (answer.stream) {
      const stream = answer.stream;
      res.writeHead(answer.status, answer.headers);
      if (answer.body) res.write(answer.body);
      writeSlices(stream, res).then(
        () => res.end(),
        () => res.destroy(),
      );
    } else {
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-length': String(Buffer.byteLength(answer.body)),
      });
      res.end(answer.body);
    }
    const handedOver = performance.now();
    res.once('finish', () => resolve(handedOver));
    res.once('close', () => resolve(handedOver));
  });
}

/**
 * When the request's body is all in, or the client gone (undefined: it is in already). A request answered
 * before its body was all in is not closed when its connection is: the socket's close counts too.
 */
export function requestEnded(req: IncomingMessage): Promise<void> | undefined {
  if (req.readableEnded) return undefined;
  return new Promise<void>((resolve) => {
    const { socket } = req;
    const done = () => {
      socket.off('close', done);
      resolve();
    };
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    socket.once('close', done);
  });
}

/** One exchange the proxy answers itself: its request, its response, the body collected, its journal entry. */
export interface OwnExchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestBody: Collector;
  record: ReturnType<typeof createExchangeRecord>;
  /** The request as the adapter read it (its turn facts), when known. */
  ctx?: { request: GatewayRequest };
}

/**
 * An answer the proxy makes itself (fault, unreachable target, its admin key in a URL): the request's body
 * is read and dropped, the answer written, and the exchange recorded once the body is in (or the client
 * gone), so the journal learns what the request meant.
 */
export async function answerOwn(exchange: OwnExchange, answer: Answer): Promise<void> {
  const { req, res, requestBody, record } = exchange;
  const ended = requestEnded(req);
  if (!req.listeners('data').length) req.on('data', (chunk: Buffer) => requestBody.add(chunk));
  req.resume();
  const answeredAt = performance.now();
  const writing = writeOwn(res, answer);
  // Written at once (writeOwn writes in its call), in the turn the request was read in or later.
  const writtenTurn = exchange.ctx && turnIfAnsweredAtOnce(exchange.ctx.request);
  const writtenAt = await writing;
  if (ended) await ended;
  record(
    answer.drop ? 0 : answer.status,
    answeredAt,
    { raw: Object.entries(answer.headers).flat(), text: answer.body },
    writtenAt,
    writtenTurn,
  );
}
