import { afterAll, describe, expect, it } from 'vitest';
import { serve } from '../adapters/node-server.ts';
import { createGateway } from '../gateway.ts';
import { createProxy } from './proxy.ts';

/*
 * Every request is somebody's: a token minted through the proxy is its agent's from the mint on, so a
 * request carrying it once the target refuses it (expired, revoked: its whoami names nobody any more) is
 * still filed under that agent, on a connection no accepted token of the agent's ever used. A token the
 * proxy never saw minted is filed under its fingerprint then. No time in it: the token is revoked at the
 * target, not left to expire.
 */
describe('a token minted through the proxy names its agent, even once refused', async () => {
  const targetGateway = createGateway({ config: {}, log: () => {} });
  const target = await serve(targetGateway, { port: 0, log: () => {} });
  const proxy = createProxy({ target: target.url, log: () => {}, config: { agents: [] } });
  const front = await serve(proxy, { port: 0, log: () => {} });
  afterAll(async () => {
    await front.close();
    proxy.close();
    await target.close();
  });

  it('files the refused token’s requests under the agent it was minted for', async () => {
    const minted = await fetch(`${front.url}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
    });
    const { token } = (await minted.json()) as { token: string };
    // A token of the same agent minted at the target itself: the proxy never saw its mint.
    const unseen = targetGateway.mintToken('agent-verified');
    targetGateway.runtime.registry.revokeTokens('agent-verified');
    for (const t of [token, unseen]) {
      const refused = await fetch(`${front.url}/v1/whoami`, {
        headers: { 'x-agent-identity': t, connection: 'close' },
      });
      expect(refused.status).toBe(401);
    }
    const [mintedEntry, seenWhoami, unseenWhoami] = proxy.gateway.journal.list({});
    expect(mintedEntry?.operation).toBe('idp.token');
    expect(seenWhoami).toMatchObject({ operation: 'whoami', status: 401, agent: 'agent-verified' });
    expect(unseenWhoami).toMatchObject({ operation: 'whoami', status: 401 });
    expect(unseenWhoami?.agent).toMatch(/^tok_/);
  });
});
