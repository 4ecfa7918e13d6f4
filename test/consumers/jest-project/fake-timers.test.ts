import { afterAll, afterEach, beforeAll, beforeEach, expect, it, jest } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/jest';
import { setupServer } from 'msw/node';

// Five searches per ten seconds per agent, then 429 with Retry-After. The gateway clock follows jest's
// modern fake timers whenever they are installed.
const gateway = createGateway({ scenario: 'burst-429' });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen());
afterAll(() => server.close());
beforeEach(() => {
  gateway.reset();
  // fetch and msw run on promise jobs and process.nextTick: leave those real.
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'queueMicrotask'] });
});
afterEach(() => {
  jest.useRealTimers();
});

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
  await runOnFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        let answer = await search(token, `question ${k}`);
        while (answer.status === 429) {
          await sleep(answer.retryAfter * 1000);
          answer = await search(token, `question ${k}`);
        }
      }
    })(),
    { timers: jest },
  );
  expect(gateway.journal.list().some((e) => e.status === 429)).toBe(true);
  expect(gateway).toFollowClientRules('agent-verified');
});

it('an agent that retries a 429 at once fails honor-retry-after', async () => {
  const token = gateway.mintToken('agent-verified');
  await runOnFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        for (let attempt = 1; attempt <= 3; attempt++)
          if ((await search(token, `question ${k}`)).status !== 429) break;
      }
    })(),
    { timers: jest },
  );
  expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(/FAIL {2}honor-retry-after/);
});

it('an agent that gives up throws, and the test expects exactly that', async () => {
  const token = gateway.mintToken('agent-verified');
  // One try per question, one question a second: the sixth in the ten-second window meets a 429.
  const agent = async () => {
    for (let k = 0; k < 10; k++) {
      const answer = await search(token, `question ${k}`);
      if (answer.status === 429) throw new Error(`gave up on question ${k}: 429`);
      await sleep(1000);
    }
  };
  await expect(runOnFakeTime(agent, { timers: jest })).rejects.toThrow('gave up on question 5: 429');
  expect(gateway).toFollowClientRules('agent-verified');
});
