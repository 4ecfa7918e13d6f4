import axios from 'axios';
import got from 'got';
import ky from 'ky';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { createGateway } from '../mock-server/gateway.ts';
import '../mock-server/testing-vitest.ts';
import { flagged, runFaked, sleep } from './support/fake-time.ts';

/*
 * Agents graded in process (msw and gateway.fetch), as an agent developer runs them: verdicts from what the
 * agent had in hand when it issued each request (delivery facts), never from how fast the machine served it.
 */

const BASE = 'http://gateway.test';
// Created at module scope, before any test installs fake timers (as the README shows it).
const gateway = createGateway({ scenario: 'burst-429', log: () => {} });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: BASE }));
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());
afterEach(() => {
  vi.useRealTimers();
  gateway.reset();
  gateway.clock.reset();
});

// The start of a ten-second window of burst-429's fixed-window limit: the first 429 asks for 10 s.
const T0 = Date.UTC(2026, 0, 1);
/** The gateway clock stopped at T0: real-time tests do not depend on where in a window they start. */
const frozenAtWindowStart = () => {
  gateway.clock.freeze();
  gateway.clock.set(T0);
};
/** Fake timers from T0, installed after the gateway was created. */
const fakeTimersAtWindowStart = () => vi.useFakeTimers({ now: T0 });

type Send = (input: string, init?: RequestInit) => Promise<Response>;
const viaMsw: Send = (input, init) => fetch(input, init);
const viaGatewayFetch: Send = (input, init) => gateway.fetch(new Request(input, init));

/** One search as an agent sends it; the answer's status and Retry-After. */
async function search(send: Send, token: string, query: string) {
  const response = await send(`${BASE}/v1/web/search`, {
    method: 'POST',
    headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

/** A sleep on the global timers, which fake timers replace (node:timers/promises would not be). */

describe('causality in process: what the agent had in hand, not how soon it came', () => {
  for (const [how, send] of [
    ['msw', viaMsw],
    ['gateway.fetch', viaGatewayFetch],
  ] as const) {
    it(`${how}: a tight sequential loop ignoring every 429 breaks honor-retry-after, however fast it ran`, async () => {
      frozenAtWindowStart();
      const token = gateway.mintToken('agent-verified');
      for (let k = 0; k < 12; k++) await search(send, token, `question ${k}`);
      expect(flagged(gateway, 'agent-verified')).toEqual(['honor-retry-after']);
      const report = gateway.clientReport('agent-verified');
      // The six requests after the first 429, each issued with a 429 in hand: all early.
      expect(report.violations[0]?.message).toMatch(
        /^#\d+ POST \/v1\/web\/search -> 429 rate_limited was sent 0\.0 s after the 429 of #\d+, which asked for 10\.0 s \(Retry-After: 10\); 6 requests in all were sent early/,
      );
      expect(report.without_connection).toBeUndefined();
      expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(
        /FAIL {2}honor-retry-after +§7[\s\S]*after #\d+ {2}Retry-After 10/,
      );
    });

    it(`${how}: a 50-iteration loop of one search is an uncapped retry loop, never a parallel storm`, async () => {
      frozenAtWindowStart();
      const token = gateway.mintToken('agent-verified');
      for (let k = 0; k < 5; k++) await search(send, token, `warm up ${k}`);
      for (let k = 0; k < 50; k++) await search(send, token, 'the same question');
      expect(flagged(gateway, 'agent-verified')).toEqual(['honor-retry-after', 'retry-cap']);
    });
  }

  it('a retry issued 0 ms after the 429 was handed back is a reaction (no grace in process)', async () => {
    frozenAtWindowStart();
    const token = gateway.mintToken('agent-verified');
    for (let k = 0; k < 6; k++) await search(viaMsw, token, `question ${k}`);
    // Issued in the same turn the 429 came back in: not a millisecond later.
    await search(viaMsw, token, 'one more');
    const entries = gateway.journal.list({ agent: 'agent-verified' });
    expect(entries.map((e) => e.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(flagged(gateway, 'agent-verified')).toEqual(['honor-retry-after']);
  });

  it('a Promise.all batch meeting a 429 was on its way, however slowly the gateway served it', async () => {
    // The gateway gets to the first three of the batch only after 40 ms each: the refusals of the batch's
    // tail are handed back long before those, and still the tail is not a reaction to them.
    gateway.faults.add({
      match: { operation: 'web.search' },
      kind: 'delay',
      delay_ms: 40,
      count: 3,
    } as never);
    fakeTimersAtWindowStart();
    const token = gateway.mintToken('agent-verified');
    const agent = Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        for (let attempt = 1; attempt <= 3; attempt++) {
          const answer = await search(viaMsw, token, `batch ${k}`);
          if (answer.status !== 429) return answer.status;
          await sleep(Number(answer.retryAfter) * 1000 + 100 * k);
        }
        return 0;
      }),
    );
    expect(await runFaked(agent)).toEqual(Array(8).fill(200));
    const entries = gateway.journal.list({ agent: 'agent-verified' });
    expect(entries.filter((e) => e.status === 429)).toHaveLength(3);
    expect(entries.every((e) => e.answers_seen !== undefined)).toBe(true);
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('batches through client libraries are issued before any answer (msw calls each handler first)', () => {
  for (const [library, send] of [
    [
      'axios (node:http)',
      (token: string, k: number) =>
        axios.post(
          `${BASE}/v1/web/search`,
          { query: `axios ${k}` },
          { headers: { 'x-agent-identity': token }, validateStatus: () => true },
        ),
    ],
    [
      'got (node:http)',
      (token: string, k: number) =>
        got.post(`${BASE}/v1/web/search`, {
          json: { query: `got ${k}` },
          headers: { 'x-agent-identity': token },
          throwHttpErrors: false,
          retry: { limit: 0 },
        }),
    ],
    [
      'ky (fetch)',
      (token: string, k: number) =>
        ky.post(`${BASE}/v1/web/search`, {
          json: { query: `ky ${k}` },
          headers: { 'x-agent-identity': token },
          throwHttpErrors: false,
          retry: 0,
        }),
    ],
  ] as const) {
    it(`${library}: eight at once meet a 429 and are no reaction to it`, async () => {
      frozenAtWindowStart();
      const token = gateway.mintToken('agent-verified');
      await Promise.all(Array.from({ length: 8 }, (_, k) => send(token, k)));
      const entries = gateway.journal.list({ agent: 'agent-verified' });
      expect(entries.filter((e) => e.status === 429)).toHaveLength(3);
      expect(new Set(entries.map((e) => e.answers_seen)).size).toBe(1);
      expect(gateway).toFollowClientRules('agent-verified');
    });
  }
});

describe('fake timers move the gateway clock, whenever the gateway was created', () => {
  it('an agent that sleeps out Retry-After with setTimeout passes in a fraction of a second', async () => {
    fakeTimersAtWindowStart();
    const wallStart = Date.now();
    const token = gateway.mintToken('agent-verified');
    const agent = (async () => {
      for (let k = 0; k < 8; k++) {
        for (let attempt = 1; ; attempt++) {
          const answer = await search(viaMsw, token, `question ${k}`);
          if (answer.status !== 429 || attempt === 3) break;
          await sleep(Number(answer.retryAfter) * 1000);
        }
      }
    })();
    await runFaked(agent);
    const entries = gateway.journal.list({ agent: 'agent-verified' });
    expect(entries.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    // The journal's gateway times are the fake clock's: ten seconds passed for the 429 to clear.
    expect((entries.at(-1)?.at as number) - (entries[0]?.at as number)).toBeGreaterThanOrEqual(10_000);
    expect(Date.now() - wallStart).toBeGreaterThanOrEqual(10_000);
    // Still fake time when the agent ended: the ten seconds above were not waited out for real.
    expect(vi.isFakeTimers()).toBe(true);
    expect(gateway).toFollowClientRules('agent-verified');
  });

  it('one that waits less than Retry-After fails honor-retry-after, with the spec section', async () => {
    fakeTimersAtWindowStart();
    const token = gateway.mintToken('agent-verified');
    const agent = (async () => {
      for (let k = 0; k < 8; k++) {
        for (let attempt = 1; attempt <= 3; attempt++) {
          const answer = await search(viaMsw, token, `question ${k}`);
          if (answer.status !== 429) break;
          await sleep(2_000);
        }
      }
    })();
    await runFaked(agent);
    expect(flagged(gateway, 'agent-verified')).toEqual(['honor-retry-after']);
    expect(gateway.clientReport('agent-verified').violations[0]?.message).toMatch(
      /was sent 2\.0 s after the 429 of #\d+, which asked for 10\.0 s \(Retry-After: 10\)/,
    );
  });
});
