import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import { runOnFakeTime } from 'agent-tool-gateway-harness/testing/jest';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';

// An agent on the openai SDK, whose own retry policy sleeps out a 429's Retry-After (it cancels the 429's
// body first). Two searches a second per agent: the third meets a 429 with Retry-After 1.
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
});

async function sdkAgent(questions: number): Promise<number> {
  const client = new OpenAI({
    apiKey: 'unused',
    baseURL: 'http://gateway.test/v1',
    defaultHeaders: { 'X-Agent-Identity': gateway.mintToken('agent-verified') },
    maxRetries: 3,
  });
  let answered = 0;
  for (let k = 0; k < questions; k++) {
    await client.post('/web/search', { body: { query: `question ${k}` } });
    answered++;
  }
  return answered;
}

it('retries a 429 after its Retry-After and finishes, on real timers', async () => {
  expect(await sdkAgent(4)).toBe(4);
  expect(gateway.journal.list().some((e) => e.status === 429)).toBe(true);
  expect(gateway).toFollowClientRules('agent-verified');
}, 60_000);

it('the same on fake timers', async () => {
  // fetch and msw run on promise jobs and process.nextTick: leave those real.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
  expect(await runOnFakeTime(sdkAgent(6), { timers: jest })).toBe(6);
  expect(gateway.journal.list().filter((e) => e.status === 429).length).toBeGreaterThan(0);
  expect(gateway).toFollowClientRules('agent-verified');
});
