import { afterAll } from 'vitest';
import { type RunningServer, serve } from '../../mock-server/adapters/node-server.ts';
import { createClock, type VirtualClock } from '../../mock-server/clock.ts';
import { createGateway, type Gateway } from '../../mock-server/gateway.ts';

/**
 * A reference gateway on loopback for a conformance run of the file: `start()` it in describeConformance's
 * options function, read it with `ran()` in the tests after the run. Closed after the file.
 */
export function servedGateway() {
  let server: RunningServer | undefined;
  let gateway: Gateway | undefined;
  afterAll(() => server?.close());
  return {
    async start(): Promise<{ gateway: Gateway; baseUrl: string; clock: VirtualClock }> {
      const clock = createClock();
      gateway = createGateway({ clock });
      server = await serve(gateway, { port: 0 });
      return { gateway, baseUrl: server.url, clock };
    },
    /** The gateway the run was served by; throws when the run did not start. */
    ran(): Gateway {
      if (!gateway) throw new Error('the conformance run did not start');
      return gateway;
    },
  };
}
