import { afterAll } from 'vitest';
import { describeConformance } from '../conformance/vitest.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createGateway } from '../mock-server/gateway.ts';

/**
 * The conformance suite against the reference gateway, through the suite's own vitest front-end: every
 * check must pass, the 429 checks included (inconclusive counts as a failure here).
 */
let server: RunningServer | undefined;
afterAll(() => server?.close());

describeConformance('conformance of the reference gateway (default config)', async () => {
  const gateway = createGateway();
  server = await serve(gateway, { port: 0 });
  return {
    baseUrl: server.url,
    token: gateway.mintToken('agent-verified'),
    deniedToken: gateway.mintToken('agent-early'),
    deniedTool: 'web.search',
    failOnInconclusive: true,
  };
});
