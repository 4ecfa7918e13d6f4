/**
 * The benchmark's fixed-rate load: requests sent on a schedule (`rate` per second, spread evenly, whatever
 * the server answers), over `connections` kept-alive sockets, one request at a time on each. Latency is taken
 * from each request's scheduled time, so a server that falls behind shows it (no coordinated omission).
 *
 * autocannon's own rate option sends each connection's quota for the second at full speed and then waits,
 * so a "fixed rate" is bursts at saturation; this generator paces within the second (a 1 ms timer) and is
 * light (raw sockets, prebuilt request bytes, a minimal HTTP/1.1 response reader). Loopback only.
 */
import { connect, type Socket } from 'node:net';

export interface PacedResult {
  /** Requests scheduled during the run. */
  scheduled: number;
  /** Answers received (2xx or not). */
  answered: number;
  non2xx: number;
  /** Requests that got no answer (a closed connection, a response this reader could not frame). */
  errors: number;
  /** Answered requests per second of the run. */
  achievedRate: number;
  /** Latency from scheduled time to the answer's last byte, ms. */
  p50: number;
  p99: number;
}

interface Connection {
  socket: Socket;
  /** The scheduled time (ms, performance.now()) of the request in flight, or undefined when idle. */
  inFlight: number | undefined;
  buffer: Buffer;
  open: boolean;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** The length of the first complete response in `buffer` and its status, or undefined while incomplete. */
function frame(buffer: Buffer): { length: number; status: number } | undefined | 'unframed' {
  const end = buffer.indexOf(HEADER_END);
  if (end === -1) return undefined;
  const head = buffer.toString('latin1', 0, end);
  const status = Number(head.slice(9, 12));
  const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (!match) return 'unframed';
  const length = end + 4 + Number(match[1]);
  return buffer.length >= length ? { length, status } : undefined;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number);

/**
 * Sends `rate` requests per second for `seconds` to `url` (http://127.0.0.1:PORT); `request(n)` builds the
 * n-th request's bytes (a whole HTTP/1.1 request with Content-Length). Resolves once every request sent has
 * been answered (or failed), at most 5 s after the schedule ends.
 */
export async function pacedLoad(options: {
  url: string;
  rate: number;
  seconds: number;
  connections: number;
  request: (n: number) => Buffer;
}): Promise<PacedResult> {
  const { hostname, port } = new URL(options.url);
  const latencies: number[] = [];
  const queue: number[] = [];
  let queueHead = 0;
  let answered = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const connections: Connection[] = [];

  const send = (conn: Connection, scheduledAt: number) => {
    conn.inFlight = scheduledAt;
    conn.socket.write(options.request(sent++));
  };
  const nextFor = (conn: Connection) => {
    if (queueHead < queue.length) send(conn, queue[queueHead++] as number);
  };
  const open = (): Connection => {
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    const conn: Connection = { socket, inFlight: undefined, buffer: Buffer.alloc(0), open: true };
    socket.on('data', (chunk: Buffer) => {
      conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
      for (;;) {
        const framed = frame(conn.buffer);
        if (framed === undefined) return;
        if (framed === 'unframed' || conn.inFlight === undefined) {
          errors += 1;
          socket.destroy();
          return;
        }
        latencies.push(performance.now() - conn.inFlight);
        answered += 1;
        if (framed.status < 200 || framed.status > 299) non2xx += 1;
        conn.inFlight = undefined;
        conn.buffer = conn.buffer.subarray(framed.length);
        nextFor(conn);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      conn.open = false;
      if (conn.inFlight !== undefined) errors += 1;
      conn.inFlight = undefined;
    });
    return conn;
  };
  for (let i = 0; i < options.connections; i++) connections.push(open());
  await Promise.all(connections.map((c) => new Promise((ready) => c.socket.once('connect', ready))));

  const interval = 1000 / options.rate;
  const total = Math.round(options.rate * options.seconds);
  const start = performance.now();
  let scheduled = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor((now - start) / interval) + 1);
      for (; scheduled < due; scheduled++) queue.push(start + scheduled * interval);
      for (let i = 0; i < connections.length && queueHead < queue.length; i++) {
        let conn = connections[i] as Connection;
        if (!conn.open) {
          conn = open();
          connections[i] = conn;
          continue; // it takes the next request once connected (below)
        }
        if (conn.inFlight === undefined && conn.socket.readyState === 'open') nextFor(conn);
      }
      if (scheduled >= total && queueHead >= queue.length) done();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const drainBy = performance.now() + 5000;
  while (connections.some((c) => c.inFlight !== undefined) && performance.now() < drainBy)
    await new Promise((r) => setTimeout(r, 2));
  const elapsed = (performance.now() - start) / 1000;
  for (const conn of connections) {
    if (conn.inFlight !== undefined) errors += 1;
    conn.inFlight = undefined;
    conn.socket.destroy();
  }
  latencies.sort((a, b) => a - b);
  return {
    scheduled,
    answered,
    non2xx,
    errors,
    achievedRate: answered / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}
