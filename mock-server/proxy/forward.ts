import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
import type { GatewayError } from '../errors.ts';
import type { ProxyDeadlines } from './proxy-options.ts';
import { type Collector, collector, endToEnd } from './wire.ts';

/*
 * One request forwarded to the target, under the proxy's deadlines: the connection (connect), the start of
 * the answer once the request is sent (first byte), and the target's silence while bytes should flow
 * (idle: the target not taking the request's body, or not sending the answer's). A `101 Switching
 * Protocols` is refused: the proxy passes HTTP exchanges, never another protocol (the agent's `Upgrade` is a
 * hop-by-hop header it does not forward, so a 101 is one the target was never asked for).
 */

/** Why the proxy answers itself instead of the target (or, once the answer has begun, cut it off). */
export type ForwardFailure =
  | { kind: 'connect_timeout' | 'first_byte_timeout' | 'idle_timeout'; ms: number }
  | { kind: 'upgrade'; status: number }
  | { kind: 'unreachable'; code: string }
  /**
   * The agent's request is not valid HTTP past its headers (a bare-LF chunk, a broken chunk size): refused
   * by the proxy as the gateway refuses it (400, from Node's parser), the target's request abandoned.
   */
  | { kind: 'bad_request'; error: GatewayError }
  /** The agent hung up before the target answered: nothing to answer, the exchange is journaled as dropped. */
  | { kind: 'agent_gone' }
  /** The request's body was refused on its way (the proxy's admin key in it: admin-key-guard.ts). */
  | { kind: 'body_refused'; error: GatewayError; fault: string };

/** The target's answer as passed to the agent. */
export interface ForwardedAnswer {
  status: number;
  answeredAt: number;
  raw: readonly string[];
  body: Collector;
  writtenAt?: number;
  /**
   * The turn of the proxy's event loop in which the last of the answer was handed to the agent's socket, when
   * that was in the loop's I/O phase (while it read the target's answer, no wait for the agent's socket to
   * drain in between): what the proxy read from its agents in that turn was sent before this answer.
   */
  writtenTurn?: number;
  /** Set when the answer was cut off by the idle deadline (then `status` is 0: the agent got no whole answer). */
  cutOff?: { kind: 'idle_timeout'; ms: number; bytes: number; targetStatus: number };
}

export interface ForwardParts {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request to the target, not yet written to. */
  out: ClientRequest;
  deadlines: ProxyDeadlines;
  requestBody: Collector;
  /** How many bytes of an answer with this status to keep. */
  answerCapacity(status: number): number;
  /** The target answered (whole, or the agent's connection ended): record it. */
  answered(answer: ForwardedAnswer): void;
  /** The proxy answers itself (or records that the agent is gone, when it is). */
  failed(failure: ForwardFailure): Promise<void>;
  /** Tells when the rest of the agent's request will never arrive (`GatewayRequest.onAbort`). */
  onAbort?(listener: (error: GatewayError) => void): void;
  /** The turn of the event loop an answer written now is written in (`GatewayRequest.answerTurn`), for `writtenTurn`. */
  answerTurn?(): number;
  /** The stream the request's body passes through to the target (admin-key-guard.ts), given how to refuse it. */
  bodyGuard?(refuse: (refusal: { error: GatewayError; fault: string }) => void): NodeJS.ReadWriteStream;
}

/** Runs a timer at a time: armed again, the previous one is dropped. */
function createDeadline() {
  let timer: NodeJS.Timeout | undefined;
  return {
    arm(ms: number, fire: () => void) {
      if (timer) clearTimeout(timer);
      timer = setTimeout(fire, ms);
    },
    clear() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    /** Starts the armed timer's wait again (no new timer: this runs per chunk of a body). */
    refresh() {
      timer?.refresh();
    },
  };
}

type Deadline = ReturnType<typeof createDeadline>;

/**
 * Where one forwarded exchange stands: whether the answer (the target's or the proxy's own) is `decided`,
 * the target's connection made (`connected`), the request all `sent`; `fail` decides it as the proxy's own
 * (once: a later failure is ignored), and the two watches arm the deadline the exchange is under.
 */
export interface ForwardState {
  readonly deadline: Deadline;
  decided: boolean;
  connected: boolean;
  sent: boolean;
  fail(failure: ForwardFailure): void;
  /** While the request is sent: the target is idle only if it does not take what there is to send. */
  watchUpload(): void;
  /** Once connected and the request sent: the first byte of the answer is due. */
  watchFirstByte(): void;
}

/** The state of one forwarded exchange; `done` is called once it is over (answered, failed, or cut). */
export function createForwardState(parts: ForwardParts, done: () => void): ForwardState {
  const { req, res, out, deadlines } = parts;
  const state: ForwardState = {
    deadline: createDeadline(),
    decided: false,
    connected: false,
    sent: false,
    fail(failure) {
      if (state.decided) return;
      state.decided = true;
      state.deadline.clear();
      // Unpiped first: a pipe whose destination closes pauses its source, and the proxy's own answer reads
      // the rest of the request's body (for what it meant) before it is journaled.
      req.unpipe(); // from the target's request, or from the body's guard before it
      out.destroy();
      if (res.headersSent) {
        res.destroy();
        done();
        return;
      }
      parts.failed(failure).then(done, done);
    },
    watchUpload() {
      if (state.decided || state.sent) return;
      state.deadline.arm(deadlines.idleTimeoutMs, () => {
        if (out.writableNeedDrain) state.fail({ kind: 'idle_timeout', ms: deadlines.idleTimeoutMs });
        else state.watchUpload(); // the agent is slow to send: the server's own request timeout is for that
      });
    },
    watchFirstByte() {
      if (state.decided || !state.connected || !state.sent) return;
      state.deadline.arm(deadlines.firstByteTimeoutMs, () =>
        state.fail({ kind: 'first_byte_timeout', ms: deadlines.firstByteTimeoutMs }),
      );
    },
  };
  return state;
}

/**
 * The request's way to the target under its deadlines: an error is an unreachable target; the connection
 * (plain or TLS) is due within the connect deadline; then the upload and the first byte are watched.
 */
export function watchRequest(out: ClientRequest, state: ForwardState, deadlines: ProxyDeadlines): void {
  const connected = () => {
    state.connected = true;
    state.watchUpload();
    state.watchFirstByte();
  };
  out.on('error', (error: NodeJS.ErrnoException) =>
    state.fail({ kind: 'unreachable', code: error.code ?? error.message }),
  );
  out.once('socket', (socket) => {
    if (!socket.connecting) return connected();
    state.deadline.arm(deadlines.connectTimeoutMs, () =>
      state.fail({ kind: 'connect_timeout', ms: deadlines.connectTimeoutMs }),
    );
    socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', connected);
  });
  out.once('finish', () => {
    state.sent = true;
    state.watchFirstByte();
  });
  out.on('drain', () => state.watchUpload());
}

/** A 101 from the target, with Upgrade and Connection headers (an 'upgrade') or without (informational): refused. */
export function refuseUpgrades(out: ClientRequest, state: ForwardState): void {
  out.on('upgrade', (_res, socket) => {
    socket.destroy();
    state.fail({ kind: 'upgrade', status: 101 });
  });
  out.on('information', (info) => {
    if (info.statusCode === 101) state.fail({ kind: 'upgrade', status: 101 });
  });
}

/**
 * The agent's request body piped to the target (and collected for the journal); the agent hanging up before
 * the answer is complete abandons the target's request too.
 */
export function sendRequest(parts: ForwardParts, state: ForwardState): void {
  const { req, res, out } = parts;
  const read = () => {
    req.on('data', (chunk: Buffer) => {
      parts.requestBody.add(chunk);
      if (state.connected) state.watchUpload();
    });
    (guard ? req.pipe(guard) : req).pipe(out);
  };
  const guard = parts.bodyGuard?.((refusal) => {
    // Nothing more reaches the target, and its request is never completed (aborted even once answered).
    state.fail({ kind: 'body_refused', ...refusal });
    out.destroy();
  });
  // A guarded body is read once the target's connection is up: the guard's scan is the proxy's work, which
  // must not count against the connect deadline (a failure before then reads the body for the journal).
  if (!guard) read();
  else
    out.once('socket', (socket) => {
      if (!socket.connecting) return read();
      socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
        if (!state.decided) read();
      });
    });
  res.once('close', () => {
    if (res.writableFinished) return;
    if (!state.decided) state.fail({ kind: 'agent_gone' });
    else out.destroy();
  });
}

/**
 * Whether the target's answer is taken: not once the exchange is decided (the proxy answered itself), and
 * never a bare 101 (no Upgrade header: it comes as a response), which is refused as an upgrade.
 */
export function takeAnswer(up: IncomingMessage, state: ForwardState): boolean {
  if (state.decided) {
    up.destroy();
    return false;
  }
  if (up.statusCode === 101) {
    up.destroy();
    state.fail({ kind: 'upgrade', status: 101 });
    return false;
  }
  state.decided = true;
  return true;
}

/**
 * The target's answer streamed to the agent, status line and raw headers as sent (hop-by-hop ones aside),
 * under the idle deadline (a silent target's answer is cut off), collected for the journal; recorded once
 * written (or the agent's connection ended), then `done`.
 */
export function streamAnswer(parts: ForwardParts, up: IncomingMessage, deadline: Deadline, done: () => void) {
  const { res, deadlines } = parts;
  const answeredAt = performance.now();
  const status = up.statusCode ?? 502;
  const body = collector(parts.answerCapacity(status));
  let cutOff: ForwardedAnswer['cutOff'];
  deadline.arm(deadlines.idleTimeoutMs, () => {
    cutOff = { kind: 'idle_timeout', ms: deadlines.idleTimeoutMs, bytes: body.total, targetStatus: status };
    up.destroy();
    res.destroy();
  });
  // A flat [name, value, ...] list, as rawHeaders: order, spelling and repeats kept.
  res.writeHead(status, up.statusMessage, endToEnd(up.rawHeaders) as unknown as OutgoingHttpHeaders);
  up.on('data', (chunk: Buffer) => {
    body.add(chunk);
    deadline.refresh();
  });
  up.pipe(res);
  // When the last of the answer was handed to the client's socket (pipe ends the response on the target's
  // end, before this listener): as the gateway records it. 'finish' comes a turn later, after the client may
  // already have sent its next request. The target's end is read in the loop's I/O phase, so the turn then
  // is one whose reads were all waiting before the answer was written; not so once the pipe waited for the
  // agent's socket to drain (the rest may then be written from a write's callback, outside that phase).
  let writtenAt: number | undefined;
  let writtenTurn: number | undefined;
  let waitedForDrain = false;
  res.once('drain', () => {
    waitedForDrain = true;
  });
  up.once('end', () => {
    deadline.clear();
    writtenAt = performance.now();
    if (!waitedForDrain) writtenTurn = parts.answerTurn?.();
  });
  let finished = false;
  const finish = (written: boolean) => {
    if (finished) return;
    finished = true;
    deadline.clear();
    parts.answered({
      status: written ? status : 0,
      answeredAt,
      raw: up.rawHeaders,
      body,
      writtenAt,
      ...(written && writtenTurn !== undefined ? { writtenTurn } : {}),
      ...(cutOff ? { cutOff } : {}),
    });
    done();
  };
  res.once('finish', () => finish(true));
  res.once('close', () => finish(res.writableFinished));
  up.once('aborted', () => res.destroy());
  up.once('error', () => res.destroy());
}

/** Forwards the request and streams the answer back; resolves once it is recorded. */
export function forward(parts: ForwardParts): Promise<void> {
  return new Promise<void>((resolve) => {
    const state = createForwardState(parts, resolve);
    parts.onAbort?.((error) => state.fail({ kind: 'bad_request', error }));
    watchRequest(parts.out, state, parts.deadlines);
    refuseUpgrades(parts.out, state);
    sendRequest(parts, state);
    parts.out.on('response', (up) => {
      if (takeAnswer(up, state)) streamAnswer(parts, up, state.deadline, resolve);
    });
  });
}
