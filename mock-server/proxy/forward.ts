import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
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
  /** The agent hung up before the target answered: nothing to answer, the exchange is journaled as dropped. */
  | { kind: 'agent_gone' };

/** The target's answer as passed to the agent. */
export interface ForwardedAnswer {
  status: number;
  answeredAt: number;
  raw: readonly string[];
  body: Collector;
  writtenAt?: number;
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

/** Forwards the request and streams the answer back; resolves once it is recorded. */
export function forward(parts: ForwardParts): Promise<void> {
  const { req, res, out, deadlines } = parts;
  return new Promise<void>((resolve) => {
    const deadline = createDeadline();
    // Whether the target's answer (or the proxy's own) is decided.
    let decided = false;
    let connected = false;
    let sent = false;
    const fail = (failure: ForwardFailure) => {
      if (decided) return;
      decided = true;
      deadline.clear();
      // Unpiped first: a pipe whose destination closes pauses its source, and the proxy's own answer reads
      // the rest of the request's body (for what it meant) before it is journaled.
      req.unpipe(out);
      out.destroy();
      if (res.headersSent) {
        res.destroy();
        resolve();
        return;
      }
      parts.failed(failure).then(resolve, resolve);
    };
    /** While the request is sent: the target is idle only if it does not take what there is to send. */
    const watchUpload = () => {
      if (decided || sent) return;
      deadline.arm(deadlines.idleTimeoutMs, () => {
        if (out.writableNeedDrain) fail({ kind: 'idle_timeout', ms: deadlines.idleTimeoutMs });
        else watchUpload(); // the agent is slow to send: the server's own request timeout is for that
      });
    };
    const watchFirstByte = () => {
      if (decided || !connected || !sent) return;
      deadline.arm(deadlines.firstByteTimeoutMs, () =>
        fail({ kind: 'first_byte_timeout', ms: deadlines.firstByteTimeoutMs }),
      );
    };
    out.on('error', (error: NodeJS.ErrnoException) =>
      fail({ kind: 'unreachable', code: error.code ?? error.message }),
    );
    out.once('socket', (socket) => {
      if (!socket.connecting) {
        connected = true;
        watchUpload();
        watchFirstByte();
        return;
      }
      deadline.arm(deadlines.connectTimeoutMs, () =>
        fail({ kind: 'connect_timeout', ms: deadlines.connectTimeoutMs }),
      );
      socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
        connected = true;
        watchUpload();
        watchFirstByte();
      });
    });
    out.once('finish', () => {
      sent = true;
      watchFirstByte();
    });
    out.on('drain', watchUpload);
    // A 101 with Upgrade and Connection headers is an 'upgrade'; without them, an informational answer.
    out.on('upgrade', (_res, socket) => {
      socket.destroy();
      fail({ kind: 'upgrade', status: 101 });
    });
    out.on('information', (info) => {
      if (info.statusCode === 101) fail({ kind: 'upgrade', status: 101 });
    });
    req.on('data', (chunk: Buffer) => {
      parts.requestBody.add(chunk);
      if (connected) watchUpload();
    });
    req.pipe(out);
    // The agent hung up before the answer was complete: the target's request is abandoned too.
    res.once('close', () => {
      if (res.writableFinished) return;
      if (!decided) fail({ kind: 'agent_gone' });
      else out.destroy();
    });
    out.on('response', (up) => passAnswer(up));

    const passAnswer = (up: IncomingMessage) => {
      if (decided) {
        up.destroy();
        return;
      }
      // A bare 101 (no Upgrade header) comes as a response: refused as well.
      if (up.statusCode === 101) {
        up.destroy();
        fail({ kind: 'upgrade', status: 101 });
        return;
      }
      decided = true;
      const answeredAt = performance.now();
      const status = up.statusCode ?? 502;
      const body = collector(parts.answerCapacity(status));
      let cutOff: ForwardedAnswer['cutOff'];
      const idle = () =>
        deadline.arm(deadlines.idleTimeoutMs, () => {
          cutOff = {
            kind: 'idle_timeout',
            ms: deadlines.idleTimeoutMs,
            bytes: body.total,
            targetStatus: status,
          };
          up.destroy();
          res.destroy();
        });
      idle();
      // A flat [name, value, ...] list, as rawHeaders: order, spelling and repeats kept.
      res.writeHead(status, up.statusMessage, endToEnd(up.rawHeaders) as unknown as OutgoingHttpHeaders);
      up.on('data', (chunk: Buffer) => {
        body.add(chunk);
        deadline.refresh();
      });
      up.pipe(res);
      // When the last of the answer was handed to the client's socket (pipe ends the response on the
      // target's end, before this listener): as the gateway records it. 'finish' comes a turn later,
      // after the client may already have sent its next request.
      let writtenAt: number | undefined;
      up.once('end', () => {
        deadline.clear();
        writtenAt = performance.now();
      });
      let done = false;
      const finish = (written: boolean) => {
        if (done) return;
        done = true;
        deadline.clear();
        parts.answered({
          status: written ? status : 0,
          answeredAt,
          raw: up.rawHeaders,
          body,
          writtenAt,
          ...(cutOff ? { cutOff } : {}),
        });
        resolve();
      };
      res.once('finish', () => finish(true));
      res.once('close', () => finish(res.writableFinished));
      up.once('aborted', () => res.destroy());
      up.once('error', () => res.destroy());
    };
  });
}
