import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../adapters/node-server.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import { createRemoteVerifier } from './verifier.ts';

describe('remote verifier: a gateway in front of another identity provider', () => {
  let idpGateway: Gateway;
  let idpServer: RunningServer;
  let front: Gateway;

  beforeAll(async () => {
    // The identity provider signs with a secret the front gateway does not know.
    idpGateway = createGateway({ config: { identity: { signing_secret: 'secret-known-only-to-the-idp' } } });
    idpServer = await serve(idpGateway, { port: 0 });
    front = createGateway({ verifier: createRemoteVerifier(idpServer.url) });
  });
  afterAll(() => idpServer.close());

  const whoami = (token?: string) =>
    front.fetch(
      new Request('http://front.test/v1/whoami', { headers: token ? { 'X-Agent-Identity': token } : {} }),
    );

  it('accepts tokens of the remote identity provider, with the tier it reports', async () => {
    const response = await whoami(idpGateway.mintToken('agent-allowlisted'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      agent: { id: 'agent-allowlisted' },
      tools: ['web.search', 'web.fetch'],
    });
  });

  it('refuses tokens the remote identity provider refuses, with its reason', async () => {
    const own = front.mintToken('agent-verified');
    const response = await whoami(own);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'invalid_identity_token', reason: 'bad_signature' });
  });

  it('sees revocation at the remote identity provider at once', async () => {
    const token = idpGateway.mintToken('agent-early');
    expect((await whoami(token)).status).toBe(200);
    idpGateway.registry.revokeTokens('agent-early');
    expect(await (await whoami(token)).json()).toMatchObject({ reason: 'revoked' });
  });

  it("its 401s point at the remote identity provider's instruction page, which answers", async () => {
    for (const token of [undefined, 'not-a-token']) {
      const body = (await (await whoami(token)).json()) as { token_instructions: string };
      expect(body.token_instructions.startsWith(`${idpServer.url}/idp/auth.md?`)).toBe(true);
      const page = await fetch(body.token_instructions);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('http://front.test/v1/whoami');
    }
  });

  it('keeps a path prefix of the identity provider URL', async () => {
    const asked: string[] = [];
    const verifier = createRemoteVerifier('http://idp.test/tenant-a', {
      fetch: async (url) => {
        asked.push(String(url));
        return Response.json({ valid: false, reason: 'expired' });
      },
    });
    expect(await verifier.verify('t')).toEqual({ ok: false, reason: 'expired', agentId: undefined });
    expect(asked).toEqual(['http://idp.test/tenant-a/idp/verify']);
    expect(verifier.idpBaseUrl).toBe('http://idp.test/tenant-a/');
  });

  it('does not serve its own /idp endpoints, whose tokens it could not verify', async () => {
    const response = await front.fetch(new Request('http://front.test/idp/token', { method: 'POST' }));
    expect(response.status).toBe(404);
  });

  it('an unreachable identity provider is a 503, never a 401 blamed on the caller', async () => {
    const orphan = createGateway({
      verifier: createRemoteVerifier('http://127.0.0.1:9', { timeoutMs: 2000 }),
      log: () => {},
    });
    const response = await orphan.fetch(
      new Request('http://o.test/v1/whoami', { headers: { 'X-Agent-Identity': 'anything' } }),
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'identity_provider_unavailable' });
  });
});
