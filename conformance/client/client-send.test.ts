import { describe, expect, it } from 'vitest';
import type { SuiteClock } from '../model/suite-clock.ts';
import type { SuiteResponse } from '../model/suite-request.ts';
import { createTokenLedger } from '../tokens/token-ledger.ts';
import { createWaitFloors } from './client-pacing.ts';
import { type ClientCore, isAnswer, sendRequest } from './client-send.ts';
import { createClientWaits } from './client-waits.ts';
import { createShortWaits } from './short-waits.ts';

/** A client core on a virtual clock whose transport answers from a script (the last answer repeats). */
function scriptedCore(answers: SuiteResponse[], maxWaitSeconds = 30) {
  let now = 0;
  const clock: SuiteClock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
  const sent: string[] = [];
  const floors = createWaitFloors(maxWaitSeconds * 1000);
  const log: string[] = [];
  const core: ClientCore = {
    base: new URL('http://127.0.0.1:9/prefix/'),
    tokens: {},
    maxWaitSeconds,
    maxRetries: 2,
    noWaitRetries: 2,
    clock,
    log: (line) => log.push(line),
    counts: { requests: 0, answers: 0 },
    retryServerErrors: true,
    transport: {
      send: async (url: URL, method: string) => {
        sent.push(`${method} ${url.pathname}`);
        return answers[Math.min(sent.length - 1, answers.length - 1)] as SuiteResponse;
      },
      close: () => {},
    } as unknown as ClientCore['transport'],
    waits: createClientWaits({
      clock,
      deadline: Infinity,
      maxWaitSeconds,
      log: () => {},
      floorOf: floors.floorOf,
    }),
    floors,
    ledger: createTokenLedger(),
    answered: new Set(),
    seen429: [],
    shortWaits: createShortWaits(),
    longestAsked: new Map(),
    honoured: new Map(),
    remaining: new Map(),
  };
  return { core, sent, log };
}
const answer = (status: number, headers: Record<string, string> = {}): SuiteResponse => ({
  status,
  headers,
  text: '{}',
  json: {},
});
const WHOAMI = { method: 'GET', path: '/v1/whoami' } as const;

describe("one request's attempts and retry decisions", () => {
  it('an answer is anything but a 429, a 5xx or no answer', () => {
    expect([200, 404, 499].map(isAnswer)).toEqual([true, true, true]);
    expect([0, 429, 500, 503].map(isAnswer)).toEqual([false, false, false, false]);
  });

  it('a transient 5xx is retried at most three times, then observed as it is, counted in the exchange', async () => {
    const { core, sent, log } = scriptedCore([answer(503)]);
    const exchange = await sendRequest(core, WHOAMI);
    expect(sent).toEqual(Array(4).fill('GET /prefix/v1/whoami'));
    expect(exchange.response.status).toBe(503);
    expect(exchange.transientRetries).toBe(3);
    expect(exchange.transientStatus).toBe(503);
    expect(log).toHaveLength(3);
    expect(core.answered.size).toBe(0);
  });

  it('a 429 is waited out as asked under the cap; past it the exchange is exhausted and said untruthful', async () => {
    const { core, sent } = scriptedCore([answer(429, { 'retry-after': '2' })]);
    const exchange = await sendRequest(core, WHOAMI);
    expect(sent).toHaveLength(3);
    expect(exchange.rateLimitExhausted).toBe(true);
    expect(exchange.retryAfterMs).toBe(2000);
    expect(exchange.retryAfterUntruthful).toBe(true);
    expect(core.seen429).toHaveLength(3);
    expect(core.waits.waitedMs).toBeGreaterThanOrEqual(4000);
  });

  it('raw returns the first answer, observe429 a 429 as is; an answer is remembered by call', async () => {
    const raw = scriptedCore([answer(503), answer(200)]);
    expect((await sendRequest(raw.core, WHOAMI, { raw: true })).response.status).toBe(503);
    const observed = scriptedCore([answer(429, { 'retry-after': '1' }), answer(200)]);
    const exchange = await sendRequest(observed.core, WHOAMI, { observe429: true });
    expect(exchange.response.status).toBe(429);
    expect(exchange.rateLimitExhausted).toBe(false);
    const served = scriptedCore([answer(200)]);
    const ok = await sendRequest(served.core, WHOAMI);
    expect(served.core.answered.has(ok.key)).toBe(true);
    expect(served.core.counts).toEqual({ requests: 1, answers: 1 });
  });
});
