import { afterAll, afterEach, beforeAll, beforeEach, expect, it, jest } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import { type ClientRuleMatchers, clientRuleMatchers } from 'agent-tool-gateway-harness/testing';
import { setupServer } from 'msw/node';

expect.extend(clientRuleMatchers);
declare module 'expect' {
  interface Matchers<R extends void | Promise<void>, T = unknown> extends ClientRuleMatchers<R> {}
}

// Five searches per ten seconds per agent, then 429 with Retry-After. The gateway clock follows jest's
// modern fake timers whenever they are installed.
const gateway = createGateway({ scenario: 'burst-429' });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());
beforeEach(() => {
  gateway.reset();
  // fetch and msw run on promise jobs and process.nextTick: leave those real.
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'queueMicrotask'] });
});
afterEach(() => {
  jest.useRealTimers();
});

/** Runs the agent to the end on fake time: every timer it sets fires at once, in order. */
async function onFakeTime<T>(agent: Promise<T>): Promise<T> {
  let done = false;
  const finished = agent.finally(() => {
    done = true;
  });
  while (!done) await jest.advanceTimersToNextTimerAsync();
  return finished;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function search(token: string, query: string) {
  const response = await fetch('http://gateway.test/v1/web/search', {
    method: 'POST',
    headers: { 'X-Agent-Identity': token, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  await response.text();
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after') ?? 1) };
}

it('an agent that sleeps out each Retry-After passes under fake timers', async () => {
  const token = gateway.mintToken('agent-verified');
  await onFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        let answer = await search(token, `question ${k}`);
        while (answer.status === 429) {
          await sleep(answer.retryAfter * 1000);
          answer = await search(token, `question ${k}`);
        }
      }
    })(),
  );
  expect(gateway.journal.list().some((e) => e.status === 429)).toBe(true);
  expect(gateway).toFollowClientRules('agent-verified');
});

it('an agent that retries a 429 at once fails honor-retry-after', async () => {
  const token = gateway.mintToken('agent-verified');
  await onFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        for (let attempt = 1; attempt <= 3; attempt++)
          if ((await search(token, `question ${k}`)).status !== 429) break;
      }
    })(),
  );
  expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(/FAIL {2}honor-retry-after/);
});
