import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from './gateway.ts';
import {
  currentTestMark,
  journalMark,
  noteRequest,
  type RunningTest,
  testStarted,
  trackGateway,
  useRunningTest,
} from './testing-marks.ts';

/** A runner of our own: which test is running is whatever this says. */
let running: RunningTest | undefined;
let restore: () => RunningTest | undefined;
beforeEach(() => {
  restore = useRunningTest(() => running);
  running = undefined;
});
afterEach(() => {
  useRunningTest(restore);
});

const whoami = (gateway: Gateway) =>
  gateway.fetch(
    new Request('http://gw.test/v1/whoami', {
      headers: { 'X-Agent-Identity': gateway.mintToken('agent-early') },
    }),
  );

describe('per-test marks', () => {
  it('outside any test there is no mark: the whole journal', async () => {
    const gateway = createGateway({ log: () => {} });
    trackGateway(gateway);
    await whoami(gateway);
    expect(currentTestMark(gateway)).toBeUndefined();
  });

  it("a gateway first seen in a test is that test's from its start, however often it is graded", async () => {
    running = { path: 'a.test.ts', name: 'made here' };
    const gateway = createGateway({ log: () => {} });
    await whoami(gateway);
    expect(currentTestMark(gateway)).toBeUndefined();
    expect(currentTestMark(gateway)).toBe(0);
  });

  it("a test's start marks every known gateway at its journal's last entry; a test is new when it starts again", async () => {
    const gateway = createGateway({ log: () => {} });
    trackGateway(gateway);
    await whoami(gateway);
    await whoami(gateway);
    running = { path: 'a.test.ts', name: 'second' };
    testStarted();
    expect(currentTestMark(gateway)).toBe(2);
    gateway.reset(); // empties the journal; the count goes on
    await whoami(gateway);
    expect(gateway.journal.list().map((e) => e.seq)).toEqual([3]);
    expect(currentTestMark(gateway)).toBe(2);
    testStarted(); // the same name again (a retry): a new test
    expect(currentTestMark(gateway)).toBe(3);
  });

  it('without a start mark, the first request through msw marks it, and later ones do not move it', async () => {
    const gateway = createGateway({ log: () => {} });
    trackGateway(gateway);
    await whoami(gateway);
    running = { path: 'b.test.ts', name: 'no hook ran' };
    noteRequest(gateway);
    await whoami(gateway);
    noteRequest(gateway);
    await whoami(gateway);
    expect(currentTestMark(gateway)).toBe(1);
  });

  it('a known gateway with no mark in this test is unmarked (never graded on an earlier test)', async () => {
    const gateway = createGateway({ log: () => {} });
    trackGateway(gateway);
    await whoami(gateway);
    running = { path: 'c.test.ts', name: 'hook did not run, no msw request' };
    expect(currentTestMark(gateway)).toBe('unmarked');
  });

  it('journalMark is the last sequence number, 0 for an empty journal', async () => {
    const gateway = createGateway({ log: () => {} });
    expect(journalMark(gateway)).toBe(0);
    await whoami(gateway);
    await whoami(gateway);
    expect(journalMark(gateway)).toBe(2);
  });
});
