import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayError } from '../../errors.ts';
import type { ConnectionFacts, GatewayRequest } from '../../http/context.ts';
import { incompleteBody, payloadTooLarge } from '../../http/read-body.ts';
import { stallRuns } from './loop-stall.ts';
import { answerTurn, currentTurn } from './loop-turn.ts';

// A Host header is echoed into links (token instructions): only a plain host[:port] is trusted.
const PLAIN_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** The path and query of an absolute-form target; anything else is read as a path that no route has. */
function pathOfAbsoluteForm(target: string): string {
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return `/${target}`;
  }
}

/**
 * An IncomingMessage as the core sees it: no web objects, headers read straight from Node's parse.
 * `connection` is what the connection guard knows of its socket (undefined outside a served socket).
 */
export class NodeRequest implements GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly connection: ConnectionFacts | undefined;
  readonly readTurn = currentTurn();
  readonly readStalls = stallRuns();
  /** Undefined for a CONNECT, which Node hands over with the bare socket. */
  readonly res: ServerResponse | undefined;
  private readonly req: IncomingMessage;
  private reading: Promise<Uint8Array> | undefined;
  /** Set once the rest of the request cannot come (timeout, parser error): reading the body fails with it. */
  private aborted: GatewayError | undefined;
  private failReading: ((error: GatewayError) => void) | undefined;

  constructor(
    req: IncomingMessage,
    res: ServerResponse | undefined,
    connection: ConnectionFacts | undefined,
  ) {
    this.req = req;
    this.res = res;
    this.method = req.method ?? 'GET';
    let target = req.url ?? '/';
    // Absolute-form targets (`GET http://host/path`, as proxies send them) carry the path after the authority;
    // a CONNECT's authority-form target (`host:port`) is read as a path, which no route has.
    if (!target.startsWith('/'))
      target = this.method === 'CONNECT' ? `/${target}` : pathOfAbsoluteForm(target);
    const q = target.indexOf('?');
    this.path = q === -1 ? target : target.slice(0, q);
    this.query = q === -1 ? '' : target.slice(q + 1);
    this.connection = connection;
  }

  answerTurn(): number {
    return answerTurn();
  }

  rawHeaders(): readonly string[] {
    return this.req.rawHeaders;
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return typeof value === 'string' || value === undefined ? value : value.join(', ');
  }

  headerList(): readonly string[] {
    const headers = this.req.headers;
    const list: string[] = [];
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined) list.push(name, typeof value === 'string' ? value : value.join(', '));
    }
    return list;
  }

  *headers(): Iterable<[string, string]> {
    for (const [name, value] of Object.entries(this.req.headers))
      if (value !== undefined) yield [name, typeof value === 'string' ? value : value.join(', ')];
  }

  get origin(): string {
    const host = this.req.headers.host;
    if (host && PLAIN_HOST.test(host)) return `http://${host}`;
    const { localAddress, localPort } = this.req.socket;
    const address = localAddress?.includes(':') ? `[${localAddress}]` : (localAddress ?? '127.0.0.1');
    return `http://${address}:${localPort}`;
  }

  arrivedBody(maxBytes: number): Uint8Array | undefined {
    const req = this.req;
    // Only a whole body already buffered (it came with the headers): anything else is read by `body`.
    if (this.aborted || this.reading || req.readableFlowing) return undefined;
    const declared = Number(req.headers['content-length']);
    if (declared > maxBytes) return undefined;
    // Whole: the parser said the message is complete, or every byte Content-Length declares is buffered
    // (Node need not have marked it `complete` yet: on Node 24 a small body that came with its headers is
    // all there but not yet `complete` when the request is handled, every time).
    const whole = req.complete || (declared >= 0 && req.readableLength >= declared);
    if (!whole) return undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
      chunks.push(chunk);
      total += chunk.length;
    }
    if (total > maxBytes) {
      this.reading = Promise.reject(payloadTooLarge(maxBytes));
      this.reading.catch(() => {});
      return undefined;
    }
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
    this.reading = Promise.resolve(bytes);
    this.arrivedWhole = true;
    return bytes;
  }

  body(maxBytes: number): Promise<Uint8Array> {
    if (this.aborted) return Promise.reject(this.aborted);
    this.reading ??= readNodeBody(this.req, maxBytes, (fail) => {
      this.failReading = fail;
    });
    return this.reading;
  }

  /**
   * The rest of the request will never arrive (Node's request timeout, a parser error in the body, the client
   * half-closed): the body read, now or later, fails with `error`, which the core answers (408, 400).
   */
  abort(error: GatewayError): void {
    this.aborted = error;
    this.failReading?.(error);
    for (const listener of this.abortListeners.splice(0)) listener(error);
  }

  private readonly abortListeners: ((error: GatewayError) => void)[] = [];

  onAbort(listener: (error: GatewayError) => void): void {
    if (this.aborted) listener(this.aborted);
    else this.abortListeners.push(listener);
  }

  /** Whether the whole request, body included, has arrived (and been read, when `arrivedBody` read it). */
  get complete(): boolean {
    return this.req.complete || this.arrivedWhole;
  }

  /** `arrivedBody` read every byte Content-Length declared: the request is whole, whatever the parser says yet. */
  private arrivedWhole = false;
}

/**
 * Reads a request body up to `maxBytes` (413 beyond, whatever Content-Length said; 400 when cut short).
 * `onFail` receives a way to end the read with an error of the adapter's (the request timeout).
 */
function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
  onFail: (fail: (error: GatewayError) => void) => void,
): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length']);
  // Not read at all: Node discards what the client still sends once the answer is written.
  if (declared > maxBytes) return Promise.reject(payloadTooLarge(maxBytes));
  if (req.complete && req.readableEnded) return Promise.resolve(new Uint8Array());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) chunks.push(chunk);
      else {
        done();
        reject(payloadTooLarge(maxBytes));
      }
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onAbort = () => {
      done();
      reject(incompleteBody());
    };
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
    };
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    onFail((error) => {
      done();
      reject(error);
    });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
