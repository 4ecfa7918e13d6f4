import { EventEmitter } from 'node:events';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createForwardState,
  type ForwardFailure,
  type ForwardParts,
  refuseUpgrades,
  streamAnswer,
  takeAnswer,
  watchRequest,
} from './forward.ts';
import { collector } from './wire.ts';

/*
 * The units of one forwarded exchange, on stand-in streams and fake timers (no network, no real time): the
 * exchange is decided once, deadlines follow the request's way, upgrades are refused, and an answer is taken
 * only while undecided. test/proxy-deadlines.test.ts and test/proxy.test.ts drive the whole over HTTP.
 */

const DEADLINES = { connectTimeoutMs: 100, firstByteTimeoutMs: 200, idleTimeoutMs: 300 };

/** Stand-ins for the agent's request, the response to it and the request to the target. */
function standIns() {
  const out = Object.assign(new EventEmitter(), {
    writableNeedDrain: false,
    destroyed: 0,
    destroy() {
      out.destroyed += 1;
    },
  });
  const req = Object.assign(new EventEmitter(), { unpipe: vi.fn(), pipe: vi.fn() });
  const res = Object.assign(new EventEmitter(), { headersSent: false, destroy: vi.fn() });
  const failures: ForwardFailure[] = [];
  const parts = {
    req: req as unknown as IncomingMessage,
    res: res as unknown as ServerResponse,
    out: out as unknown as ClientRequest,
    deadlines: DEADLINES,
    requestBody: collector(1024),
    answerCapacity: () => 1024,
    answered: vi.fn(),
    failed: async (failure: ForwardFailure) => {
      failures.push(failure);
    },
  } satisfies ForwardParts;
  return { out, req, res, parts, failures };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a forwarded exchange', () => {
  it('is decided once: the first failure is answered, later ones ignored', async () => {
    const { parts, out, req, failures } = standIns();
    const done = vi.fn();
    const state = createForwardState(parts, done);
    state.fail({ kind: 'unreachable', code: 'ECONNREFUSED' });
    state.fail({ kind: 'agent_gone' });
    await vi.runAllTimersAsync();
    expect(failures).toEqual([{ kind: 'unreachable', code: 'ECONNREFUSED' }]);
    expect(req.unpipe).toHaveBeenCalledTimes(1);
    expect(out.destroyed).toBe(1);
    expect(done).toHaveBeenCalledTimes(1);
  });

  it('once the answer has begun, a failure cuts the connection instead of answering', () => {
    const { parts, res, failures } = standIns();
    res.headersSent = true;
    const done = vi.fn();
    createForwardState(parts, done).fail({ kind: 'idle_timeout', ms: 300 });
    expect(res.destroy).toHaveBeenCalled();
    expect(failures).toEqual([]);
    expect(done).toHaveBeenCalledTimes(1);
  });

  it('follows the request: an error is an unreachable target; a connection not made in time a connect timeout', async () => {
    const unreachable = standIns();
    const state = createForwardState(unreachable.parts, () => {});
    watchRequest(unreachable.parts.out, state, DEADLINES);
    unreachable.out.emit('error', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    await vi.runAllTimersAsync();
    expect(unreachable.failures).toEqual([{ kind: 'unreachable', code: 'ECONNREFUSED' }]);

    const slow = standIns();
    const slowState = createForwardState(slow.parts, () => {});
    watchRequest(slow.parts.out, slowState, DEADLINES);
    slow.out.emit('socket', Object.assign(new EventEmitter(), { connecting: true }));
    await vi.advanceTimersByTimeAsync(99);
    expect(slow.failures).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(slow.failures).toEqual([{ kind: 'connect_timeout', ms: 100 }]);
  });

  it('once connected and the request sent, the first byte is due within its deadline', async () => {
    const { parts, out, failures } = standIns();
    const state = createForwardState(parts, () => {});
    watchRequest(parts.out, state, DEADLINES);
    out.emit('socket', Object.assign(new EventEmitter(), { connecting: false }));
    expect(state.connected).toBe(true);
    out.emit('finish');
    expect(state.sent).toBe(true);
    await vi.advanceTimersByTimeAsync(200);
    expect(failures).toEqual([{ kind: 'first_byte_timeout', ms: 200 }]);
  });

  it('refuses a 101, as an upgrade or an informational answer', async () => {
    const upgrade = standIns();
    refuseUpgrades(
      upgrade.parts.out,
      createForwardState(upgrade.parts, () => {}),
    );
    const socket = { destroy: vi.fn() };
    upgrade.out.emit('upgrade', {}, socket);
    expect(socket.destroy).toHaveBeenCalled();
    const informational = standIns();
    refuseUpgrades(
      informational.parts.out,
      createForwardState(informational.parts, () => {}),
    );
    informational.out.emit('information', { statusCode: 103 });
    informational.out.emit('information', { statusCode: 101 });
    await vi.runAllTimersAsync();
    expect(upgrade.failures).toEqual([{ kind: 'upgrade', status: 101 }]);
    expect(informational.failures).toEqual([{ kind: 'upgrade', status: 101 }]);
  });

  it('takes the target’s answer only while undecided, and never a bare 101', async () => {
    const { parts, failures } = standIns();
    const state = createForwardState(parts, () => {});
    const answer = (statusCode: number) =>
      Object.assign(new EventEmitter(), { statusCode, destroy: vi.fn() }) as unknown as IncomingMessage & {
        destroy: ReturnType<typeof vi.fn>;
      };
    const bare101 = answer(101);
    expect(takeAnswer(bare101, state)).toBe(false);
    expect(bare101.destroy).toHaveBeenCalled();
    await vi.runAllTimersAsync();
    expect(failures).toEqual([{ kind: 'upgrade', status: 101 }]);
    // Decided already (the proxy answered itself): a late answer is dropped.
    const late = answer(200);
    expect(takeAnswer(late, state)).toBe(false);
    expect(late.destroy).toHaveBeenCalled();
    const fresh = createForwardState(standIns().parts, () => {});
    expect(takeAnswer(answer(200), fresh)).toBe(true);
    expect(fresh.decided).toBe(true);
  });

  it('notes the turn it wrote the answer in when it wrote it while reading the target’s end, none once it waited for a drain', async () => {
    vi.useRealTimers();
    /** The target's answer (`chunks`) into an agent's socket that takes `takes` bytes before a drain. */
    const written = async (chunks: Buffer[], takes: number) => {
      const { parts } = standIns();
      const up = Object.assign(new PassThrough(), { statusCode: 200, statusMessage: 'OK', rawHeaders: [] });
      const res = Object.assign(
        new Writable({
          highWaterMark: takes,
          // The socket takes a chunk later (a slow agent): past highWaterMark, the pipe waits for a drain.
          write: (_chunk, _encoding, done) => setTimeout(done, 1),
        }),
        { writeHead: vi.fn(), headersSent: false },
      );
      const answered = vi.fn();
      let turn = 0;
      streamAnswer(
        { ...parts, res: res as unknown as ServerResponse, answered, answerTurn: () => ++turn },
        up as unknown as IncomingMessage,
        createForwardState(parts, () => {}).deadline,
        () => {},
      );
      for (const chunk of chunks) up.write(chunk);
      up.end();
      await new Promise((done) => res.once('finish', done));
      return answered.mock.calls[0]?.[0] as { status: number; writtenTurn?: number };
    };
    const small = await written([Buffer.from('{"ok":true}')], 1024);
    expect(small).toMatchObject({ status: 200, writtenTurn: 1 });
    // The first chunk fills the agent's socket: the pipe pauses, the rest waits in the target's answer and its
    // end is read from the drain's callback, which may run outside the loop's I/O phase.
    const large = await written([Buffer.alloc(64 * 1024), Buffer.from('the rest')], 1024);
    expect(large.status).toBe(200);
    expect(large.writtenTurn).toBeUndefined();
  });
});
