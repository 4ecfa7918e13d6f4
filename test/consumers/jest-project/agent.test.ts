import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createGateway } from 'agent-tool-gateway-harness';
import { gatewayHandlers } from 'agent-tool-gateway-harness/msw';
import 'agent-tool-gateway-harness/testing/jest'; // registers and types expect(gateway).toFollowClientRules()
import { setupServer } from 'msw/node';

const gateway = createGateway();
const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
// To fail on requests no handler serves: { onUnhandledFrame: 'error' } (msw 3), { onUnhandledRequest: 'error' } (msw 2).
beforeAll(() => server.listen());
afterAll(() => server.close());

/** Stands in for your agent: one search through the global fetch, as an agent would send it. */
async function search(token: string, query: string): Promise<Response> {
  return fetch('http://gateway.test/v1/web/search', {
    method: 'POST',
    headers: { 'X-Agent-Identity': token, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
}

it('my agent searches with a verified token and follows the client rules', async () => {
  const response = await search(gateway.mintToken('agent-verified'), 'agent tool gateway');
  expect(response.status).toBe(200);
  expect(gateway).toFollowClientRules('agent-verified');
});

it('an agent that repeats a call denied with 403 breaks a client rule', async () => {
  const token = gateway.mintToken('agent-early'); // early access: web.search is not allowed
  expect((await search(token, 'first try')).status).toBe(403);
  expect((await search(token, 'first try')).status).toBe(403); // the same call again, nothing changed
  expect(gateway).not.toFollowClientRules('agent-early');
  expect(gateway.clientReport('agent-early').violations.map((v) => v.rule)).toContain(
    'no-retry-on-access-denied',
  );
});
