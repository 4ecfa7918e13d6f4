import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLOSE_GRACE_MS, createConnectionGuard, type TrackedSocket } from './connection-guard.ts';
import type { NodeRequest } from './request.ts';

/** A stand-in socket: an address, `destroy()` that closes it, and nothing else the guard reads. */
function fakeSocket(address = '127.0.0.1') {
  const socket = new EventEmitter() as EventEmitter & {
    remoteAddress: string;
    destroyed: boolean;
    destroy(): void;
  };
  socket.remoteAddress = address;
  socket.destroyed = false;
  (socket as unknown as { bytesRead: number }).bytesRead = 0;
  socket.destroy = () => {
    if (socket.destroyed) return;
    socket.destroyed = true;
    socket.emit('close');
  };
  return socket as unknown as TrackedSocket;
}
const request = () => ({}) as NodeRequest;

describe('connection guard: over the cap, an idle connection makes room without dropping a request', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the longest-idle connection stops counting at once, answers a request that arrives within the grace, then closes', () => {
    vi.useFakeTimers();
    const guard = createConnectionGuard(2);
    const [a, b, c] = [fakeSocket(), fakeSocket(), fakeSocket()];
    guard.opened(a);
    guard.opened(b);
    guard.opened(c);
    // C is served (not refused) and A, the longest idle, is not closed under a request it may have sent.
    expect(a.destroyed).toBe(false);
    const onA = request();
    const state = guard.started(a, onA);
    expect(state?.closeAfter).toBe(true);
    expect(guard.started(c, request())?.refused).toBe(false);
    vi.advanceTimersByTime(CLOSE_GRACE_MS * 2);
    // Its request in progress: still open (it closes after its answer, Connection: close).
    expect(a.destroyed).toBe(false);
    guard.finished(a, onA);
    // B, never used, is still counted: a fourth connection makes room with it.
    const d = fakeSocket();
    guard.opened(d);
    expect(b.destroyed).toBe(false);
    vi.advanceTimersByTime(CLOSE_GRACE_MS);
    // Decided on the turn after, once waiting I/O was read.
    vi.advanceTimersByTime(1);
    // Silent through the grace: closed.
    expect(b.destroyed).toBe(true);
    expect(guard.started(d, request())?.refused).toBe(false);
  });

  it('a fresh connection that sent some bytes (a request still arriving) is left to the timeouts', () => {
    vi.useFakeTimers();
    const guard = createConnectionGuard(1);
    const [a, b] = [fakeSocket(), fakeSocket()];
    guard.opened(a);
    (a as unknown as { bytesRead: number }).bytesRead = 20;
    guard.opened(b);
    vi.advanceTimersByTime(CLOSE_GRACE_MS * 2);
    expect(a.destroyed).toBe(false);
  });

  it('a flood of silent connections from one address: past twice the cap, the oldest silent ones close at once', () => {
    const guard = createConnectionGuard(2);
    const sockets = Array.from({ length: 6 }, () => fakeSocket());
    for (const socket of sockets) guard.opened(socket);
    // 2 counted (the newest), 2 made room with and waiting for the headers timeout, 2 closed.
    expect(sockets.map((s) => s.destroyed)).toEqual([true, true, false, false, false, false]);
  });

  it('a kept-alive connection made room with is never closed idle: after its next answer, or at the idle timeout', () => {
    vi.useFakeTimers();
    const guard = createConnectionGuard(1);
    const [a, b] = [fakeSocket(), fakeSocket()];
    guard.opened(a);
    const first = request();
    guard.started(a, first);
    guard.finished(a, first);
    guard.opened(b);
    vi.advanceTimersByTime(CLOSE_GRACE_MS * 10);
    expect(a.destroyed).toBe(false);
    // Its next request is answered with Connection: close.
    expect(guard.started(a, request())?.closeAfter).toBe(true);
    expect(guard.started(b, request())?.refused).toBe(false);
  });

  it('at the idle timeout, a kept-alive connection is closed only if no request arrived meanwhile (read after the timer), at the second one', () => {
    vi.useFakeTimers();
    const guard = createConnectionGuard(10, { idleTimeoutMs: 5000 });
    const [quiet, reused] = [fakeSocket(), fakeSocket()];
    let rearmed = 0;
    (quiet as unknown as { setTimeout(ms: number): void }).setTimeout = (ms) => {
      rearmed = ms;
    };
    for (const socket of [quiet, reused]) {
      guard.opened(socket);
      const first = request();
      guard.started(socket, first);
      (socket as unknown as { bytesRead: number }).bytesRead = 80;
      guard.finished(socket, first);
      guard.idleTimedOut(socket);
    }
    // The next request's bytes were in the socket when the timer ran: read before the decision.
    (reused as unknown as { bytesRead: number }).bytesRead = 160;
    vi.advanceTimersByTime(1);
    // Silent: given the timeout once more (a busy client's timers run late), then closed.
    expect([quiet.destroyed, rearmed]).toEqual([false, 5000]);
    expect(reused.destroyed).toBe(false);
    guard.idleTimedOut(quiet);
    vi.advanceTimersByTime(1);
    expect(quiet.destroyed).toBe(true);
  });

  it('with every connection of the address busy, a newcomer is refused (answered 429, then closed)', () => {
    const guard = createConnectionGuard(1);
    const [a, b] = [fakeSocket(), fakeSocket()];
    guard.opened(a);
    guard.started(a, request());
    guard.opened(b);
    expect(guard.started(b, request())?.refused).toBe(true);
    expect(a.destroyed).toBe(false);
    // Another address is not affected.
    const other = fakeSocket('127.0.0.2');
    guard.opened(other);
    expect(guard.started(other, request())?.refused).toBe(false);
  });
});
