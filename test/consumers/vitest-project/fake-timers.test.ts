import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/vitest';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';

// Five searches per ten seconds per agent; the sixth gets 429 with Retry-After. Created before the fake
// timers: the gateway clock reads Date.now() at each call, so it follows them whenever they are installed.
const gateway = createGateway({ scenario: 'burst-429' });
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen());
afterAll(() => server.close());
beforeEach(() => {
  gateway.reset(); // fresh limits per test (each test is graded on its own requests anyway)
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stands in for your agent's tool call: one search through the global fetch. */
async function search(token: string, query: string) {
  const response = await fetch('http://gateway.test/v1/web/search', {
    method: 'POST',
    headers: { 'X-Agent-Identity': token, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  await response.text();
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after') ?? 1) };
}

it('an agent that sleeps out each Retry-After passes, in a fraction of a second of real time', async () => {
  const token = gateway.mintToken('agent-verified');
  await runOnFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        let answer = await search(token, `question ${k}`);
        while (answer.status === 429) {
          await sleep(answer.retryAfter * 1000); // ten seconds of fake time
          answer = await search(token, `question ${k}`);
        }
      }
    })(),
  );
  expect(gateway.journal.list().some((e) => e.status === 429)).toBe(true);
  expect(gateway).toFollowClientRules('agent-verified');
});

it('an agent that retries a 429 at once fails honor-retry-after, with the spec section and its timeline', async () => {
  const token = gateway.mintToken('agent-verified');
  await runOnFakeTime(
    (async () => {
      for (let k = 0; k < 8; k++) {
        for (let attempt = 1; attempt <= 3; attempt++)
          if ((await search(token, `question ${k}`)).status !== 429) break;
      }
    })(),
  );
  expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(
    /FAIL {2}honor-retry-after +§7[\s\S]*What agent-verified did[\s\S]*-> 429 rate_limited {2}after #\d+/,
  );
});

it('a parallel batch that meets a 429 passes: its requests were on their way together', async () => {
  const token = gateway.mintToken('agent-verified');
  await runOnFakeTime(
    Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        let answer = await search(token, `batch question ${k}`);
        while (answer.status === 429) {
          await sleep(answer.retryAfter * 1000 + k * 100);
          answer = await search(token, `batch question ${k}`);
        }
      }),
    ),
  );
  expect(gateway).toFollowClientRules('agent-verified');
});

it('a tight sequential loop that ignores 429s is an uncapped retry loop, never a parallel storm', async () => {
  const token = gateway.mintToken('agent-verified');
  await runOnFakeTime(
    (async () => {
      for (let k = 0; k < 50; k++) await search(token, 'the same question');
    })(),
  );
  const rules = gateway.clientReport('agent-verified').violations.map((v) => v.rule);
  expect([...new Set(rules)].sort()).toEqual(['honor-retry-after', 'retry-cap']);
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
  await expect(runOnFakeTime(agent)).rejects.toThrow('gave up on question 5: 429');
  expect(gateway).toFollowClientRules('agent-verified');
});
