import { afterAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../gateway.ts';
import { serve } from '../node-server.ts';
import { stallClock } from './loop-stall.ts';

/*
 * The stall clock moves while the event loop is held up, and only then. Only what holds under any load is
 * asserted: a loop held for 150 ms is late by at least 150 ms less a probe's period and slack (30 ms), however slow
 * the machine (load only adds to it).
 */
const holdLoop = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy: nothing else of this process runs meanwhile.
  }
};
const tick = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('the event loop’s stall clock', () => {
  it('moves by the time the loop was held up, the stall under way included', async () => {
    stallClock();
    await tick(15);
    const before = stallClock();
    holdLoop(150);
    // Read before the probe ran: the stall under way counts already.
    expect(stallClock() - before).toBeGreaterThanOrEqual(150 - 30);
    await tick(15);
    expect(stallClock() - before).toBeGreaterThanOrEqual(150 - 30);
  });

  it('never goes back', async () => {
    let last = stallClock();
    for (let k = 0; k < 5; k++) {
      await tick(3);
      const now = stallClock();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });
});

describe('the stall clock in the journal (node:http)', () => {
  const gateway = createGateway({ config: {}, log: () => {} });
  const served = serve(gateway, { port: 0, log: () => {} });
  afterAll(async () => (await served).close());

  it('each request read over node:http notes it; a stall between two requests shows in their difference', async () => {
    const token = gateway.mintToken('agent-verified');
    const whoami = async () =>
      (await fetch(`${(await served).url}/v1/whoami`, { headers: { 'x-agent-identity': token } })).text();
    await whoami();
    await tick(15);
    holdLoop(120);
    await whoami();
    const [first, second] = gateway.journal.list({ agent: 'agent-verified' });
    expect(first?.stalled_ms).toBeTypeOf('number');
    expect((second?.stalled_ms as number) - (first?.stalled_ms as number)).toBeGreaterThanOrEqual(120 - 30);
  });
});
