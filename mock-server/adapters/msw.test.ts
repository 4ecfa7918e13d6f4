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
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
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
      server.listen({ onUnhandledRequest: 'error' });
    }
  });
});
