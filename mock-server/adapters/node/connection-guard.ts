import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../../errors.ts';
import type { ConnectionFacts } from '../../http/context.ts';
import { currentTurn } from './loop-turn.ts';
import type { NodeRequest } from './request.ts';

const CONNECTION = Symbol('gateway connection state');

/** A served socket, carrying what the guard knows of its connection. */
export type TrackedSocket = Socket & { [CONNECTION]?: ConnectionState };

/** What the adapter knows of one connection, kept on its socket. */
export interface ConnectionState {
  readonly facts: ConnectionFacts;
  /** Its client address's group while it counts against the cap (undefined once closed, or when refused). */
  group: ClientGroup | undefined;
  /** Over its client's cap with nothing idle to close: its requests are answered 429 and it closes. */
  refused: boolean;
  /**
   * The request in progress (a core request, or a fetch handler's response), and any pipelined after it
   * (`requestsOf`): one field set and cleared per request, where a Set's add and delete made V8 rebuild its
   * table every few requests in the old generation (a connection lives long), which only a full collection
   * frees (issue 35).
   */
  current: NodeRequest | ServerResponse | undefined;
  more: Set<NodeRequest | ServerResponse> | undefined;
  /** A parser error came while a request was in progress: the connection closes after that answer. */
  closeAfter: boolean;
  /** It carried a request: a kept-alive connection, which its client may reuse at any moment. */
  used: boolean;
  /** Requests begun on it so far. */
  begun: number;
  /** Made room with for a newcomer: its next answer closes it. */
  closing: boolean;
  /** Reached the idle timeout once with nothing received: closed at the next one. */
  idleOnce: boolean;
  /** The socket's bytes read when it last became idle: more since means a request is arriving. */
  bytesAtIdle: number;
  /** When it last became idle (opened, or its last request finished): the longest idle is made room with. */
  idleSince: number;
}

/** The requests in progress on a connection, the oldest first. */
export const requestsOf = (state: ConnectionState): (NodeRequest | ServerResponse)[] =>
  state.current === undefined ? [] : [state.current, ...(state.more ?? [])];

/** Whether a request is in progress on a connection. */
export const busy = (state: ConnectionState) => state.current !== undefined;

/** The connections of one client address that count against its cap (a Set changed only as they open and close). */
interface ClientGroup {
  readonly address: string;
  readonly sockets: Set<TrackedSocket>;
}

/** The group's connection without a request in progress that has been idle longest (a scan: only at the cap). */
function longestIdle(group: ClientGroup): TrackedSocket | undefined {
  let found: TrackedSocket | undefined;
  let since = Number.POSITIVE_INFINITY;
  for (const socket of group.sockets) {
    const state = socket[CONNECTION];
    if (!state || busy(state) || socket.destroyed || state.idleSince >= since) continue;
    found = socket;
    since = state.idleSince;
  }
  return found;
}

/** The state of a socket's connection, once the guard has seen it open. */
export const connectionOf = (socket: Socket): ConnectionState | undefined =>
  (socket as TrackedSocket)[CONNECTION];

export type ConnectionGuard = ReturnType<typeof createConnectionGuard>;

/**
 * How long a connection that never sent a request, made room with for a newcomer, may still send one before
 * the guard closes it (the server passes its `headers_timeout_ms`: the patience it has for any request).
 * Silent as it looks, its client may have connected and not written yet (a busy client process) or have
 * written what this busy process has not read: closing it sooner (at once, or after 1 s) dropped such
 * requests with a reset and no answer in bursts on a loaded machine.
 */
export const CLOSE_GRACE_MS = 10_000;

/**
 * Caps the connections of each client address at `maxPerClient`. A connection beyond it makes room: the
 * address's longest-idle connection (no request in progress: a socket that never sent a byte, or a
 * kept-alive one between requests) stops counting and closes without losing a request sent on it
 * (`makeRoom`). So thousands of idle sockets from one address are shed while its busy connections
 * and new ones keep working, and no request already sent is dropped unanswered; only when every connection
 * of the address has a request in progress is the new one refused (its request is answered 429,
 * `reason: connections`, and it closes). Costs a request two Set operations.
 */
export function createConnectionGuard(
  maxPerClient: number,
  options: { closeGraceMs?: number; idleTimeoutMs?: number } = {},
) {
  const closeGraceMs = options.closeGraceMs ?? CLOSE_GRACE_MS;
  const groups = new Map<string, ClientGroup>();
  let ids = 0;
  const release = (socket: TrackedSocket, state: ConnectionState) => {
    const group = state.group;
    if (!group) return;
    state.group = undefined;
    group.sockets.delete(socket);
    if (group.sockets.size === 0) groups.delete(group.address);
  };

  /**
   * Stops counting an idle connection, and closes it without dropping a request its client may have sent:
   * a kept-alive one after its next answer (`Connection: close`), or at the idle timeout (which its client
   * was told of in `Keep-Alive`); one that never sent a request after `closeGraceMs` of silence, or
   * sooner when its address has `maxPerClient` such connections waiting already (`wait`).
   */
  const silent = (socket: TrackedSocket, state: ConnectionState) =>
    !state.used && !busy(state) && socket.bytesRead === 0;
  // Per address, the silent connections made room with and not closed yet, oldest first: at most
  // `maxPerClient` of them (an address past twice the cap is a flood, not a burst: its oldest silent one goes).
  const waiting = new Map<string, Set<TrackedSocket>>();
  const wait = (socket: TrackedSocket) => {
    const address = socket.remoteAddress ?? '';
    const sockets = waiting.get(address) ?? new Set<TrackedSocket>();
    waiting.set(address, sockets);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0 && waiting.get(address) === sockets) waiting.delete(address);
    });
    if (sockets.size <= maxPerClient) return;
    const oldest = sockets.values().next().value as TrackedSocket;
    sockets.delete(oldest);
    const oldestState = oldest[CONNECTION];
    if (oldestState && silent(oldest, oldestState)) oldest.destroy();
  };
  const makeRoom = (socket: TrackedSocket, state: ConnectionState) => {
    release(socket, state);
    state.closing = true;
    if (state.used) return;
    wait(socket);
    const closing = setTimeout(() => {
      // Decided after the I/O waiting now is read (Node runs timers first): a request that arrived while
      // this process was busy has started by then, and a client that sent any byte is left to the timeouts.
      setImmediate(() => {
        if (silent(socket, state)) socket.destroy();
      });
    }, closeGraceMs);
    closing.unref();
    socket.once('close', () => clearTimeout(closing));
  };

  return {
    opened(socket: TrackedSocket): void {
      const address = socket.remoteAddress ?? '';
      const state: ConnectionState = {
        facts: {
          id: ++ids,
          openedAt: performance.now(),
          openedTurn: currentTurn(),
          remoteAddress: socket.remoteAddress,
        },
        group: undefined,
        refused: false,
        current: undefined,
        more: undefined,
        closeAfter: false,
        used: false,
        begun: 0,
        closing: false,
        idleOnce: false,
        bytesAtIdle: 0,
        idleSince: performance.now(),
      };
      socket[CONNECTION] = state;
      let group = groups.get(address);
      if (group && group.sockets.size >= maxPerClient) {
        const idle = longestIdle(group);
        if (idle) makeRoom(idle, idle[CONNECTION] as ConnectionState);
        else state.refused = true;
      }
      if (!state.refused) {
        if (!group) {
          group = { address, sockets: new Set() };
          groups.set(address, group);
        }
        group.sockets.add(socket);
        state.group = group;
      }
      socket.once('close', () => release(socket, state));
    },

    /** A request began on the socket: it is no longer idle. */
    started(socket: TrackedSocket, request: NodeRequest | ServerResponse): ConnectionState | undefined {
      const state = socket[CONNECTION];
      if (!state) return undefined;
      if (state.current === undefined) state.current = request;
      else if (state.current !== request) {
        state.more ??= new Set();
        state.more.add(request);
      }
      state.used = true;
      state.begun += 1;
      state.idleOnce = false;
      if (state.closing) state.closeAfter = true;
      return state;
    },

    /** Its answer is written (or the connection is gone): idle again, most recently, once nothing is left. */
    finished(socket: TrackedSocket, request: NodeRequest | ServerResponse): void {
      const state = socket[CONNECTION];
      if (!state) return;
      if (state.current === request) {
        const next = state.more?.values().next().value;
        state.current = next;
        if (next !== undefined) state.more?.delete(next);
      } else state.more?.delete(request);
      if (state.current !== undefined) return;
      state.bytesAtIdle = socket.bytesRead;
      state.idleSince = performance.now();
    },

    /**
     * A kept-alive connection reached the idle timeout (Node's keep-alive timer, `server.on('timeout')`).
     * Decided after the I/O waiting now is read (Node runs timers before it reads sockets): a request that
     * arrived meanwhile keeps it. Silent, it gets the timeout once more before it closes: clients stop
     * reusing a connection by the announced `Keep-Alive: timeout`, but a busy client's timers run late, and
     * closing on the dot reset connections it was just sending on (bursts on a loaded machine).
     */
    idleTimedOut(socket: TrackedSocket): void {
      setImmediate(() => {
        const state = socket[CONNECTION];
        if (socket.destroyed || (state && (busy(state) || socket.bytesRead > state.bytesAtIdle))) return;
        if (state && !state.idleOnce && options.idleTimeoutMs) {
          state.idleOnce = true;
          socket.setTimeout(options.idleTimeoutMs);
          return;
        }
        socket.destroy();
      });
    },

    /** The answer of a refused connection's request. */
    refusal: () =>
      new GatewayError('rate_limited', {
        message: `This client address already holds ${maxPerClient} connections, each with a request in progress (server.max_connections_per_client): send on those, or retry once one is done, with backoff.`,
        details: { reason: 'connections', limit: maxPerClient },
      }),
  };
}
