import type { Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { serve } from '../../mock-server/adapters/node-server.ts';
import { createProxy } from '../../mock-server/proxy/proxy.ts';

/**
 * A real proxy with `adminKey` in front of `target` (a node:http server), both on loopback, for the
 * describe block it is called in: the target listens and the proxy serves before its tests, and all close
 * after. Returns the proxy's URL, once it serves.
 */
export function useProxyInFront(target: Server, adminKey: string): () => string {
  let base = '';
  const closers: (() => unknown)[] = [];
  beforeAll(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const proxy = createProxy({
      target: `http://127.0.0.1:${(target.address() as { port: number }).port}`,
      adminKey,
      log: () => {},
    });
    const server = await serve(proxy, { port: 0, log: () => {} });
    base = server.url;
    closers.push(
      () => server.close(),
      () => proxy.close(),
    );
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    target.closeAllConnections();
    await new Promise<void>((resolve) => target.close(() => resolve()));
  });
  return () => base;
}
