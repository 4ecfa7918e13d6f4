import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { runOnFakeTime } from '../mock-server/run-on-fake-time.ts';
import { assertFollowsClientRules } from '../mock-server/testing.ts';

/*
 * Fake timers and other fetches, in process: with vitest's fake timers (`useFakeTimers({ now })`) an agent
 * that sleeps out a 429 works; fake timers that replace process.nextTick and queueMicrotask (jest's by
 * default) fail at once with a message naming the fix (`doNotFake`), not after ENOTFOUND gateway.test; an
 * agent that reached the gateway with nothing (undici's own fetch, which msw does not intercept) is told
 * what to do.
 */

const BASE = 'http://fake-timers.test';
const gateway = createGateway({ scenario: 'burst-429' });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: BASE }));
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());

/** Six searches, each 429 slept out (Retry-After), one at a time. */
async function agent(token: string) {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let k = 0; k < 6; k++)
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await fetch(`${BASE}/v1/web/search`, {
        method: 'POST',
        headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `weather ${k}` }),
      });
      await response.text();
      if (response.status !== 429) break;
      await sleep(Number(response.headers.get('retry-after')) * 1000);
    }
}

describe('fake timers and other fetches in process', () => {
  it("vitest's useFakeTimers({ now }): the agent sleeps out its 429 on fake time and is graded", async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    try {
      const mark = gateway.journal.list().at(-1)?.seq ?? 0;
      await runOnFakeTime(agent(gateway.mintToken('agent-verified')), { timers: vi });
      const entries = gateway.journal.list({ agent: 'agent-verified', since: mark });
      expect(entries.some((e) => e.status === 429)).toBe(true);
      expect(entries.filter((e) => e.status === 200)).toHaveLength(6);
      assertFollowsClientRules(gateway, 'agent-verified', { since: mark });
    } finally {
      vi.useRealTimers();
    }
  });

  it("fake timers that replace nextTick and queueMicrotask (jest's default) fail at once, naming doNotFake", async () => {
    // vitest fakes nextTick only in worker threads; queueMicrotask stands for both here (jest fakes both).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'queueMicrotask'] });
    let message = '';
    try {
      await runOnFakeTime(() => Promise.resolve('never started'), { timers: vi });
    } catch (error) {
      message = (error as Error).message;
    } finally {
      vi.useRealTimers();
    }
    expect(message).toMatch(
      /^runOnFakeTime: Fake timers replaced queueMicrotask, which fetch and msw run on/,
    );
    expect(message).toContain("jest.useFakeTimers({ now, doNotFake: ['nextTick', 'queueMicrotask'] })");
  });

  it('an agent whose requests never reached the gateway (undici’s own fetch) is told the fix', () => {
    const empty = createGateway();
    expect(() => assertFollowsClientRules(empty, 'agent-verified')).toThrow(
      /undici's own fetch, request or a Pool .* msw does not intercept it: give the agent globalThis\.fetch, or serve the gateway on loopback/,
    );
  });
});
