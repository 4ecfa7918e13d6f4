import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/jest';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';

// Agents on the openai and Anthropic SDKs, whose own retry policies sleep out a 429's Retry-After (they
// cancel the 429's body first). Two searches a second per agent: the third meets a 429 with Retry-After 1.
const gateway = createGateway({
  config: {
    rate_limits: {
      rules: [{ name: 'tight', scope: 'agent', algorithm: 'fixed_window', limit: 2, window_seconds: 1 }],
    },
  },
});
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen());
afterAll(() => server.close());
afterEach(() => {
  jest.useRealTimers();
  gateway.reset();
  gateway.clock.reset();
});

/** What the agent needs of an SDK client: its generic POST, which runs the SDK's retry policy. */
interface SdkClient {
  post(path: string, options: { body: unknown }): PromiseLike<unknown>;
}
const sdkOptions = (maxRetries = 3) => ({
  apiKey: 'unused',
  baseURL: 'http://gateway.test/v1',
  defaultHeaders: { 'X-Agent-Identity': gateway.mintToken('agent-verified') },
  maxRetries,
});

async function sdkAgent(questions: number, client: SdkClient = new OpenAI(sdkOptions())): Promise<number> {
  let answered = 0;
  for (let k = 0; k < questions; k++) {
    await client.post('/web/search', { body: { query: `question ${k}` } });
    answered++;
  }
  return answered;
}

it('on real timers, each SDK retries a 429 after its Retry-After (no hang) and gives up as configured', async () => {
  // The gateway clock stands still: whatever the machine's speed, every search after the second is refused
  // (Retry-After: 1), so each retry is a real one-second wait and another 429.
  gateway.clock.freeze();
  for (const client of [new OpenAI(sdkOptions(2)), new Anthropic(sdkOptions(2))]) {
    gateway.reset(); // limits and journal start over; the clock stays frozen
    await expect(sdkAgent(3, client)).rejects.toThrow(/429/);
    // The third question, then its two retries, each refused again.
    expect(gateway.journal.list().map((e) => e.status)).toEqual([200, 200, 429, 429, 429]);
  }
}, 60_000);

it('on fake timers, each SDK sleeps out the 429s and finishes, in no real time', async () => {
  // fetch and msw run on promise jobs and process.nextTick: leave those real.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
  expect(await runOnFakeTime(sdkAgent(6), { timers: jest })).toBe(6);
  expect(await runOnFakeTime(sdkAgent(6, new Anthropic(sdkOptions())), { timers: jest })).toBe(6);
  expect(gateway.journal.list().filter((e) => e.status === 429).length).toBeGreaterThan(0);
  expect(gateway).toFollowClientRules('agent-verified');
});
