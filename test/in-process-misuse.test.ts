import { setupServer } from 'msw/node';
import { describe, expect, it } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { createGateway, createSharedGateway } from '../mock-server/gateway.ts';
import { assertFollowsClientRules, assertFollowsClientRulesShared } from '../mock-server/testing.ts';
import '../mock-server/testing-vitest.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';

/* What an agent developer gets for a mistake: a message that names it, not a TypeError from inside. */

describe('misuse of the matcher says what it expected', () => {
  it('something that is not a gateway', () => {
    const gateway = createGateway({ log: () => {} });
    for (const wrong of [
      undefined,
      null,
      'agent-early',
      { fetch: gateway.fetch },
      gateway.journal,
      [gateway],
    ])
      expect(() => expect(wrong).toFollowClientRules('agent-early')).toThrow(
        /toFollowClientRules grades the gateway the agent talked to: expect\(gateway\)\.toFollowClientRules\('agent-id'\), where gateway = createGateway\(\.\.\.\).*Received /,
      );
    expect(() => expect({ journal: {} }).toFollowClientRules('agent-early')).toThrow(
      /Received an object \(journal\)/,
    );
    expect(() => assertFollowsClientRules('gateway' as never, 'agent-early')).toThrow(
      /Received string gateway/,
    );
  });

  it('no agent id', () => {
    const gateway = createGateway({ log: () => {} });
    expect(() => expect(gateway).toFollowClientRules(undefined as never)).toThrow(
      /needs the id of the agent to grade/,
    );
  });

  it('requests that never reached the gateway (msw not listening) are named as the likely cause', async () => {
    const gateway = createGateway({ log: () => {} });
    // Handlers made, server.listen() forgotten: the agent's fetch to the base URL never reaches them.
    setupServer(...gatewayHandlers(gateway));
    expect(() => expect(gateway).toFollowClientRules('agent-early')).toThrow(
      /Nothing to grade: no request from agent-early was seen in this test\.\nIn this test the journal holds no request at all: none reached the gateway\.\n.*msw was not intercepting them: call server\.listen\(\) before the agent runs/,
    );
  });

  it('a wrong agent id, when others did send requests, names the agents the journal holds', async () => {
    const gateway = createGateway({ log: () => {} });
    const server = setupServer(...gatewayHandlers(gateway));
    server.listen({ onUnhandledFrame: 'error' });
    try {
      const token = gateway.mintToken('agent-verified');
      await fetch('http://gateway.test/v1/whoami', { headers: { 'x-agent-identity': token } });
    } finally {
      server.close();
    }
    expect(() => expect(gateway).toFollowClientRules('agent-early')).toThrow(
      /In this test the journal holds requests from: agent-verified \(1\)\. Is agent-early the agent whose token/,
    );
  });
});

describeWithRedis('a gateway on a shared store grades from the shared journal', () => {
  const redis = useRedis();

  it('the matcher reads the store (awaited); clientReport says to', async () => {
    const config = {
      store: { url: redis.url, key_prefix: 'inproc', lease_seconds: 1, timeout_ms: 10_000 },
      rate_limits: {
        rules: [{ name: 'two', scope: 'agent', algorithm: 'fixed_window', limit: 2, window_seconds: 60 }],
      },
    } as never;
    const gateway = await createSharedGateway({ config, log: () => {} });
    const other = await createSharedGateway({ config, log: () => {} });
    const server = setupServer(...gatewayHandlers(gateway));
    server.listen({ onUnhandledFrame: 'error' });
    try {
      const token = gateway.mintToken('agent-verified');
      // A tight loop ignoring 429s: the second instance sees it only through the store's journal.
      for (let k = 0; k < 5; k++)
        await fetch('http://gateway.test/v1/web/search', {
          method: 'POST',
          headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
          body: JSON.stringify({ query: `question ${k}` }),
        });
      expect(gateway.journal.list({ agent: 'agent-verified' })).toEqual([]);
      await expect(other).not.toFollowClientRules('agent-verified');
      await expect(expect(gateway).toFollowClientRules('agent-verified')).rejects.toThrow(
        /FAIL {2}honor-retry-after[\s\S]*What agent-verified did \(5 requests\)[\s\S]*after #\d+/,
      );
      await expect(assertFollowsClientRulesShared(gateway, 'agent-verified')).rejects.toThrow(
        /honor-retry-after/,
      );
      expect(() => gateway.clientReport('agent-verified')).toThrow(/shared store.*readClientReport/);
      expect(() => assertFollowsClientRules(gateway, 'agent-verified')).toThrow(/shared store/);
    } finally {
      server.close();
      await gateway.close();
      await other.close();
    }
  }, 30_000);
});
