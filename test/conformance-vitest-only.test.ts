import { afterAll, describe, expect, it } from 'vitest';
import { describeConformance } from '../conformance/vitest.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';

/** `only` returned by an options function narrows the run (the other checks' tests skip, sending nothing). */
let server: RunningServer | undefined;
let gateway: Gateway | undefined;
afterAll(() => server?.close());

describeConformance('conformance with only, from an options function', async () => {
  gateway = createGateway();
  server = await serve(gateway, { port: 0 });
  return { baseUrl: server.url, token: gateway.mintToken('agent-verified'), only: ['health.without-token'] };
});

describe('what that run sent', () => {
  it('only health requests: the unselected checks did not run', () => {
    if (!gateway) throw new Error('the conformance run did not start');
    const paths = new Set(gateway.journal.list().map((e) => e.path));
    expect([...paths]).toEqual(['/v1/health']);
  });
});
