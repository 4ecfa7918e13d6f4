import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { stallBetween } from '../../client-report/facts/causality.ts';
import { createGateway } from '../../gateway.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { serve } from '../node-server.ts';
import { stallRuns } from './loop-stall.ts';

/*
 * The loop's runs of stalls: a loop held up shows as a stall, the one under way included. Only what holds
 * under any load is asserted: a loop held for 150 ms is late by at least 150 ms less a probe's period and slack
 * (30 ms), however slow the machine (load only adds to it); the runs' shape holds whatever else stalled.
 */
// The real clock, as loaded (a test below fakes performance.now with the timers).
const realNow = performance.now.bind(performance);
const holdLoop = (ms: number) => {
  const until = realNow() + ms;
  while (realNow() < until) {
    // Busy: nothing else of this process runs meanwhile.
  }
};
const tick = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** The longest single stall of the runs that ended after `since`. */
const longestSince = (since: number) =>
  Math.max(0, ...stallRuns().map(([, to, , longest]) => (to > since ? longest : 0)));

describe('the event loop’s runs of stalls', () => {
  it('show a loop held up as one stall, the one under way included', async () => {
    stallRuns();
    await tick(15);
    const before = performance.now();
    holdLoop(150);
    // Read before the probe ran: the stall under way counts already.
    expect(longestSince(before)).toBeGreaterThanOrEqual(150 - 30);
    await tick(15);
    expect(longestSince(before)).toBeGreaterThanOrEqual(150 - 30);
  });

  it('are in order, each within its span: the time lost at most its length, its longest stall at most that', async () => {
    stallRuns();
    for (const ms of [120, 60, 90]) {
      await tick(15);
      holdLoop(ms);
    }
    await tick(15);
    const now = performance.now();
    const runs = stallRuns();
    expect(runs.length).toBeGreaterThan(0);
    runs.forEach(([from, to, stalled, longest], k) => {
      expect(to).toBeLessThanOrEqual(now + 1);
      expect(from).toBeLessThanOrEqual(to);
      expect(stalled).toBeLessThanOrEqual(to - from + 0.02);
      expect(longest).toBeGreaterThan(0);
      expect(longest).toBeLessThanOrEqual(stalled);
      const next = runs[k + 1];
      if (next) expect(next[0]).toBeGreaterThanOrEqual(to);
    });
  });
});

describe('the runs of stalls in the journal (node:http)', () => {
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
    expect(second.stall_runs?.length).toBeGreaterThan(0);
    expect(stallBetween(first, second)).toBeGreaterThanOrEqual(120 - 30);
  });
});

describe('the runs of stalls in the journal (in process: gateway.fetch, as msw calls it)', () => {
  const gateway = createGateway({ config: {}, log: () => {} });
  const token = gateway.mintToken('agent-verified');
  const whoami = async () =>
    (
      await gateway.fetch(new Request('http://gw.test/v1/whoami', { headers: { 'x-agent-identity': token } }))
    ).text();
  afterEach(() => {
    vi.useRealTimers();
  });

  it('each request issued in process notes them; a stall after an answer shows between it and the next request', async () => {
    await whoami();
    await tick(15);
    holdLoop(120);
    await whoami();
    const [first, second] = gateway.journal.list({ agent: 'agent-verified' }).slice(-2) as [
      JournalEntry,
      JournalEntry,
    ];
    expect(first.answer_order).toBeDefined();
    expect(second.stall_runs?.length).toBeGreaterThan(0);
    expect(stallBetween(first, second)).toBeGreaterThanOrEqual(120 - 30);
  });

  it('none while a test fakes the clock: its waits are the test’s, and the real clock’s stalls would not compare', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date', 'performance'] });
    await whoami();
    holdLoop(60);
    // The fake clock jumps ahead: read on it, the loop would seem to have stalled for seconds.
    vi.advanceTimersByTime(5_000);
    await whoami();
    const [first, second] = gateway.journal.list({ agent: 'agent-verified' }).slice(-2) as [
      JournalEntry,
      JournalEntry,
    ];
    expect(first.stall_runs).toBeUndefined();
    expect(second.stall_runs).toBeUndefined();
  });
});
