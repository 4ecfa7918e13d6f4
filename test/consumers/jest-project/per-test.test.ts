import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import 'agent-tool-gateway-harness/testing/jest';
import { setupServer } from 'msw/node';

// One gateway for the file and no reset: each test is graded on the requests made since it began.
const gateway = createGateway();
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
beforeAll(() => server.listen());
afterAll(() => server.close());

/** Stands in for your agent: one search; like most agents, it reports a failed request and goes on. */
async function agent(baseUrl: string): Promise<string> {
  try {
    const response = await fetch(`${baseUrl}/v1/web/search`, {
      method: 'POST',
      headers: {
        'X-Agent-Identity': gateway.mintToken('agent-verified'),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query: 'agent tool gateway' }),
    });
    return `searched: ${response.status}`;
  } catch (error) {
    return `could not search: ${(error as Error).message}`;
  }
}

it('a good agent passes', async () => {
  expect(await agent('http://gateway.test')).toBe('searched: 200');
  expect(gateway).toFollowClientRules('agent-verified');
});

it('the next test, whose agent never reaches the gateway, is not graded on the test before', async () => {
  expect(await agent('http://127.0.0.1:9')).toMatch(/could not search/); // a base URL no handler serves: refused
  expect(() => expect(gateway).toFollowClientRules('agent-verified')).toThrow(
    'no request from agent-verified was seen in this test',
  );
});

it('a test in which the agent is expected not to call says so', () => {
  expect(gateway).toFollowClientRules('agent-verified', { allowNoRequests: true });
});
