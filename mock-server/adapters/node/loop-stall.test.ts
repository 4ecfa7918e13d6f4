import { afterAll, describe, expect, it } from 'vitest';
import { stallBetween } from '../../client-report/facts/causality.ts';
import { createGateway } from '../../gateway.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { serve } from '../node-server.ts';
import { longestStalls } from './loop-stall.ts';

/*
 * The loop's longest stalls: a loop held up shows as one stall, the one under way included. Only what holds
 * under any load is asserted: a loop held for 150 ms is late by at least 150 ms less a probe's period and slack
 * (30 ms), however slow the machine (load only adds to it); the staircase's shape holds whatever else stalled.
 */
const holdLoop = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy: nothing else of this process runs meanwhile.
  }
};
const tick = (ms: number) => new Promise((done) => setTimeout(done, ms));
const longestSince = (since: number) =>
  Math.max(0, ...longestStalls().map(([ended, ms]) => (ended > since ? Math.min(ms, ended - since) : 0)));

describe('the event loop’s longest stalls', () => {
  it('show a loop held up as one stall, the one under way included', async () => {
    longestStalls();
    await tick(15);
    const before = performance.now();
    holdLoop(150);
    // Read before the probe ran: the stall under way counts already.
    expect(longestSince(before)).toBeGreaterThanOrEqual(150 - 30);
    await tick(15);
    expect(longestSince(before)).toBeGreaterThanOrEqual(150 - 30);
  });

  it('are a staircase: oldest first, each longer than every later one, none in the future', async () => {
    longestStalls();
    for (const ms of [120, 60, 90]) {
      await tick(15);
      holdLoop(ms);
    }
    await tick(15);
    const now = performance.now();
    const staircase = longestStalls();
    expect(staircase.length).toBeGreaterThan(0);
    staircase.forEach(([ended, ms], k) => {
      expect(ended).toBeLessThanOrEqual(now + 1);
      expect(ms).toBeGreaterThan(0);
      const next = staircase[k + 1];
      if (next) {
        expect(next[0]).toBeGreaterThan(ended);
        expect(next[1]).toBeLessThanOrEqual(ms);
      }
    });
  });
});

describe('the longest stalls in the journal (node:http)', () => {
  const gateway = createGateway({ config: {}, log: () => {} });
  const served = serve(gateway, { port: 0, log: () => {} });
  afterAll(async () => (await served).close());

  it('each request read over node:http notes them; a stall after an answer shows between it and the next request', async () => {
    const token = gateway.mintToken('agent-verified');
    const whoami = async () =>
      (await fetch(`${(await served).url}/v1/whoami`, { headers: { 'x-agent-identity': token } })).text();
    await whoami();
    await tick(15);
    holdLoop(120);
    await whoami();
    const [first, second] = gateway.journal.list({ agent: 'agent-verified' }) as [JournalEntry, JournalEntry];
    expect(second.longest_stalls?.length).toBeGreaterThan(0);
    expect(stallBetween(first, second)).toBeGreaterThanOrEqual(120 - 30);
  });
});
