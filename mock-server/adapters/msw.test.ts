import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.ts';
import { gatewayHandlers } from './msw.ts';

describe('msw handlers', () => {
  const gateway = createGateway();
  const server = setupServer(
    ...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test/' }),
    http.get('http://other.test/x', () => Response.json({ other: true })),
  );
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterAll(() => server.close());

  it('answers requests under the base URL through global fetch, and leaves other hosts alone', async () => {
    const token = gateway.mintToken('agent-early');
    const whoami = await fetch('http://gateway.test/v1/whoami', { headers: { 'X-Agent-Identity': token } });
    expect(await whoami.json()).toMatchObject({ agent: { id: 'agent-early' } });
    expect(await (await fetch('http://other.test/x')).json()).toEqual({ other: true });
  });

  it('can build its own gateway from options', async () => {
    const handlers = gatewayHandlers(
      { config: { tools: { 'web.fetch': { enabled: false } } } },
      { baseUrl: 'http://own.test' },
    );
    expect(handlers).toHaveLength(1);
    expect(handlers[0]?.info.path).toBe('http://own.test/*');
  });

  it('a dropped connection surfaces as a network error, as with the Node server', async () => {
    const dropping = setupServer(
      ...gatewayHandlers({ fetch: async () => Response.error() }, { baseUrl: 'http://drop.test' }),
    );
    server.close();
    dropping.listen();
    try {
      await expect(fetch('http://drop.test/v1/health')).rejects.toThrow(TypeError);
    } finally {
      dropping.close();
      server.listen({ onUnhandledFrame: 'error' });
    }
  });
});

describe('a client that cancels an answer body (the openai and Anthropic SDKs, before each retry)', () => {
  const gateway = createGateway({ scenario: 'burst-429', log: () => {} });
  const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://cancel.test' }));
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterAll(() => server.close());

  it('settles the cancel, though msw keeps an unread clone of every mocked response for its events', async () => {
    const token = gateway.mintToken('agent-verified');
    const statuses: number[] = [];
    for (let k = 0; k < 7; k++) {
      const response = await fetch('http://cancel.test/v1/web/search', {
        method: 'POST',
        headers: { 'X-Agent-Identity': token, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `q${k}` }),
      });
      statuses.push(response.status);
      // What the SDKs do (openai's CancelReadableStream): a reader's cancel, awaited. A tee'd body would wait
      // for msw's clone to be cancelled too, and the test would hang until its timeout.
      const reader = response.body?.getReader();
      const cancelled = reader?.cancel();
      reader?.releaseLock();
      await cancelled;
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    // A body still reads whole while its clone is cancelled. (msw 3 hands the client a stream of its own, so
    // the two are a web-stream tee: the clone's cancel settles once the answer is read, as over a network.)
    const response = await fetch('http://cancel.test/v1/health');
    const copy = response.clone();
    const [body] = await Promise.all([response.json(), copy.body?.cancel()]);
    expect(body).toMatchObject({ status: 'ok' });
  });

  it("the gateway's answer and its clone are independent copies: the clone's cancel settles unread (msw 2's unread clone)", async () => {
    const response = await gateway.fetch(new Request('http://cancel.test/v1/health'));
    const copy = response.clone();
    await copy.body?.cancel();
    expect(await response.json()).toMatchObject({ status: 'ok' });
    const again = await gateway.fetch(new Request('http://cancel.test/v1/health'));
    const other = again.clone();
    await again.body?.cancel();
    expect(await other.json()).toMatchObject({ status: 'ok' });
  });
});
