import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { assertFollowsClientRules, journalMark, runOnFakeTime } from '../mock-server/testing-vitest.ts';

/**
 * The README's pattern, as a user writes it: one gateway at module scope, no reset between tests. Each test
 * grades its own traffic: a test whose agent never reached the gateway is not graded on the test before it.
 */
const gateway = createGateway({ scenario: 'burst-429', log: () => {} });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());

/** Stands in for the agent: one search; it reports `fetch failed` as agents do and returns null. */
async function search(base: string, query: string): Promise<number | null> {
  try {
    const response = await fetch(`${base}/v1/web/search`, {
      method: 'POST',
      headers: {
        'X-Agent-Identity': gateway.mintToken('agent-verified'),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query }),
    });
    await response.text();
    return response.status;
  } catch {
    return null;
  }
}

describe('a test grades its own traffic', () => {
  it('a good agent passes', async () => {
    expect(await search('http://gateway.test', 'first')).toBe(200);
    expect(gateway).toFollowClientRules('agent-verified');
  });

  it('the next test, whose agent fails to connect, fails: the previous test passing is not this one', async () => {
    // A wrong base URL: msw does not answer it and the request errors (fetch failed).
    expect(await search('http://gateway.invalid', 'second')).toBeNull();
    expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(
      /no request from agent-verified was seen in this test[\s\S]*fetch failed/,
    );
    expect(() => assertFollowsClientRules(gateway, 'agent-verified')).toThrow(
      /no request from agent-verified was seen in this test/,
    );
    // `.not` cannot be made to pass by nothing either.
    expect(() => expect(gateway).not.toFollowClientRules('agent-verified')).toThrow(/Nothing to grade/);
  });

  it('a test with no requests fails, unless it says none are expected', () => {
    expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(
      /no request from agent-verified was seen in this test[\s\S]*allowNoRequests/,
    );
    expect(gateway).toFollowClientRules('agent-verified', { allowNoRequests: true });
    expect(assertFollowsClientRules(gateway, 'agent-verified', { allowNoRequests: true }).requests).toBe(0);
    // A misspelt agent is still a mistake, whatever is allowed.
    expect(() => expect(gateway).toFollowClientRules('agent-verifed', { allowNoRequests: true })).toThrow(
      /No agent "agent-verifed"/,
    );
  });

  it("a misbehaving test's requests are not the next test's: the next one grades only its own", async () => {
    for (let k = 0; k < 7; k++) await search('http://gateway.test', 'the same question'); // 429s ignored
    expect(gateway).not.toFollowClientRules('agent-verified');
  });

  it('... so a careful agent after it passes, with the limit state the first one left (no reset)', async () => {
    gateway.reset(); // the limits start over; the journal's count goes on, which changes nothing
    expect(await search('http://gateway.test', 'one careful question')).toBe(200);
    expect(gateway).toFollowClientRules('agent-verified');
    expect(gateway.clientReport('agent-verified').requests).toBe(1);
  });

  it('requests sent with gateway.fetch (no msw) count for the test too', async () => {
    const token = gateway.mintToken('agent-early');
    await gateway.fetch(
      new Request('http://gateway.test/v1/whoami', { headers: { 'X-Agent-Identity': token } }),
    );
    expect(gateway).toFollowClientRules('agent-early');
  });

  it('since: a mark taken by hand grades only what came after it (other runners, scripts)', async () => {
    expect(await search('http://gateway.test', 'before the mark')).toBe(200);
    const since = journalMark(gateway) as number;
    expect(() => assertFollowsClientRules(gateway, 'agent-verified', { since })).toThrow(
      new RegExp(`no request from agent-verified was seen after #${since}`),
    );
    expect(await search('http://gateway.test', 'after the mark')).toBe(200);
    expect(assertFollowsClientRules(gateway, 'agent-verified', { since }).requests).toBe(1);
    expect(() => assertFollowsClientRules(gateway, 'agent-verified', { since: -1 })).toThrow(/since/);
  });

  it('a gateway made inside the test is graded on all of its journal', async () => {
    const own = createGateway({ log: () => {} });
    const token = own.mintToken('agent-verified');
    await own.fetch(new Request('http://own.test/v1/whoami', { headers: { 'X-Agent-Identity': token } }));
    expect(own).toFollowClientRules('agent-verified');
    expect(own).toFollowClientRules('agent-verified'); // and again: the same requests
  });
});

describe('runOnFakeTime', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** An agent's tool call that sleeps out Retry-After, and gives up (throws) after `attempts` tries. */
  async function patientThenGivesUp(query: string, attempts = 3) {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch('http://gateway.test/v1/web/search', {
        method: 'POST',
        headers: {
          'X-Agent-Identity': gateway.mintToken('agent-verified'),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ query }),
      });
      await response.body?.cancel();
      if (response.status !== 429) return response.status;
      if (attempt === attempts) throw new Error(`gave up after ${attempt} attempts: 429`);
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
    }
  }

  it("returns the agent's value, sleeping out each Retry-After on fake time", async () => {
    gateway.reset();
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    const statuses = await runOnFakeTime(async () => {
      const out: number[] = [];
      for (let k = 0; k < 7; k++) out.push(await patientThenGivesUp(`question ${k}`));
      return out;
    });
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(gateway.journal.list().some((e) => e.status === 429)).toBe(true);
    expect(gateway).toFollowClientRules('agent-verified');
  });

  it("rejects with the agent's own error when it gives up, and leaves nothing unhandled", async () => {
    gateway.reset();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
      // One question a second, one try each: the sixth in the ten-second window meets a 429 and gives up.
      await expect(
        runOnFakeTime(async () => {
          for (let k = 0; k < 10; k++) {
            await patientThenGivesUp(`question ${k}`, 1);
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }),
      ).rejects.toThrow(/gave up after 1 attempts: 429/);
      // Let any unhandled rejection be reported before looking (a macrotask on the real timers).
      vi.useRealTimers();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('says what is missing without fake timers, and bounds an agent that never ends', async () => {
    await expect(runOnFakeTime(Promise.resolve(1))).rejects.toThrow(/Timers are not mocked|useFakeTimers/);
    vi.useFakeTimers();
    const forever = async () => {
      for (;;) await new Promise((resolve) => setTimeout(resolve, 1000));
    };
    await expect(runOnFakeTime(forever, { maxTimers: 50 })).rejects.toThrow(
      /still running after 50 timers \(50000 ms of fake time\)/,
    );
  });
});
