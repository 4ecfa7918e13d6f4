import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayCore } from '../../core.ts';
import type { GatewayError } from '../../errors.ts';
import type { GatewayRequest, GatewayResponse } from '../../http/context.ts';
import { writeAnswer, writeFailed } from './answers.ts';
import {
  type ConnectionGuard,
  type ConnectionState,
  connectionOf,
  type TrackedSocket,
} from './connection-guard.ts';
import { closesAfterAnswer, edgeRefusal, http2Preface, missingHost } from './edge-refusals.ts';
import type { NodeHandler } from './handlers.ts';
import { NodeRequest } from './request.ts';

/** A request taken in: its record, its socket and what the guard knows of its connection. */
interface Accepted {
  request: NodeRequest;
  socket: TrackedSocket;
  state: ConnectionState | undefined;
}

/**
 * The first steps of every request on both listeners: the request record, the guard told a request began,
 * and the refusals at the edge (an over-cap connection's 429, a missing Host, HTTP/2's preface, the edge
 * checks). A refusal is answered in this tick (a PRI connection does not outlive it) with `refuse`, the
 * connection closes after it, and undefined is returned.
 */
function accept(
  req: IncomingMessage,
  res: ServerResponse,
  guard: ConnectionGuard,
  refuse: (error: GatewayError, request: GatewayRequest) => GatewayResponse,
): Accepted | undefined {
  const socket = req.socket as TrackedSocket;
  const request = new NodeRequest(req, res, connectionOf(socket)?.facts);
  const state = guard.started(socket, request);
  const refusal = state?.refused
    ? guard.refusal()
    : (missingHost(req) ?? http2Preface(req) ?? edgeRefusal(req));
  if (!refusal) return { request, socket, state };
  if (state) state.closeAfter = true;
  writeAnswer(res, refuse(refusal, request), true);
  guard.finished(socket, request);
  return undefined;
}

/** node:http straight onto the core: one record in, one `writeHead` + `end` out, then the record stage. */
export function coreListener(core: GatewayCore, guard: ConnectionGuard, log: (line: string) => void) {
  const refuse = (error: GatewayError, request: GatewayRequest) => core.refuse(error, request);
  return (req: IncomingMessage, res: ServerResponse) => {
    const accepted = accept(req, res, guard, refuse);
    if (!accepted) return;
    // A microtask later: by then Node's parser has also taken the rest of the bytes that came with the
    // headers, so a small body is there to read without a wait (`arrivedBody`).
    queueMicrotask(() => handleOnCore(core, res, accepted, guard, log));
  };
}

/** The core's answer to a request, written; the connection guard learns it is done. */
function handleOnCore(
  core: GatewayCore,
  res: ServerResponse,
  { request, socket, state }: Accepted,
  guard: ConnectionGuard,
  log: (line: string) => void,
) {
  const write = (answer: GatewayResponse) => {
    try {
      // After a timeout or a parser error on this connection, or an answer before the body arrived, it
      // closes after this answer, and nothing more is answered on it.
      const close = state?.closeAfter === true || closesAfterAnswer(request);
      if (close && state) state.closeAfter = true;
      const streaming = writeAnswer(res, answer, close);
      // A streamed answer's connection is busy until the stream ends.
      if (streaming) return void streaming.then(() => guard.finished(socket, request));
    } catch (error) {
      writeFailed(res, error, log);
    }
    guard.finished(socket, request);
  };
  const failed = (error: unknown) => {
    writeFailed(res, error, log);
    guard.finished(socket, request);
  };
  // In memory the core answers at once: written in this turn, with no promise in between.
  let answer: ReturnType<GatewayCore['answer']>;
  try {
    answer = core.answer(request);
  } catch (error) {
    return failed(error);
  }
  if (answer instanceof Promise) answer.then(write, failed);
  else write(answer);
}

/** A handler writing its own answers (the proxy), with the connection facts and refusals of `coreListener`. */
export function nodeListener(handler: NodeHandler, guard: ConnectionGuard, log: (line: string) => void) {
  const refuse = (error: GatewayError, request: GatewayRequest) => handler.refuse(error, request);
  return (req: IncomingMessage, res: ServerResponse) => {
    const accepted = accept(req, res, guard, refuse);
    if (!accepted) return;
    const { request, socket } = accepted;
    handler.handleNode(request, req, res).then(
      () => guard.finished(socket, request),
      (error: unknown) => {
        writeFailed(res, error, log);
        guard.finished(socket, request);
      },
    );
  };
}
