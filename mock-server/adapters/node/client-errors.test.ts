import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SERVER_SETTINGS } from '../../config/schema.ts';
import { plainRefusal } from './answers.ts';
import { onClientError } from './client-errors.ts';
import { createConnectionGuard, type TrackedSocket } from './connection-guard.ts';
import type { NodeRequest } from './request.ts';

/** A stand-in socket that records what is written to it. */
function fakeSocket() {
  const socket = new EventEmitter() as EventEmitter & Record<string, unknown>;
  const written: string[] = [];
  Object.assign(socket, {
    remoteAddress: '127.0.0.1',
    destroyed: false,
    writable: true,
    bytesRead: 0,
    end(data: Buffer, done?: () => void) {
      written.push(data.toString('latin1'));
      done?.();
    },
    destroy() {
      socket.destroyed = true;
    },
  });
  return { socket: socket as unknown as TrackedSocket, written };
}

const timeout = () => Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });

describe("Node's headers timeout, decided after the waiting request is read", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a request that started right after the timer (it was in the socket) is served, not answered 408', () => {
    vi.useFakeTimers();
    const guard = createConnectionGuard(10);
    const handler = onClientError(DEFAULT_SERVER_SETTINGS, 16_384, plainRefusal);
    const arrived = fakeSocket();
    const silent = fakeSocket();
    guard.opened(arrived.socket);
    guard.opened(silent.socket);
    handler(timeout(), arrived.socket);
    handler(timeout(), silent.socket);
    // The poll phase reads the first socket's request before the decision.
    guard.started(arrived.socket, {} as NodeRequest);
    vi.advanceTimersByTime(1);
    expect(arrived.written).toEqual([]);
    expect(silent.written).toHaveLength(1);
    expect(silent.written[0]).toMatch(/^HTTP\/1\.1 408 [\s\S]*"code":"request_timeout"/);
  });
});
