import { call, mintOwnToken, search } from './call.ts';
import type { ClientContext, ClientProgram } from './types.ts';

/*
 * Every request is somebody's (a held-out round): a health probe carrying the agent's own key belongs to the
 * agent the key names, though health is answered before identity; a token cached from an earlier run
 * (revoked) belongs to its agent through the proxy too, which cannot ask the target whose it is (its whoami
 * refuses it): the connection the agent refreshed on ties the refused requests to it.
 */

/** A GET with the program's headers of choice (no token unless given). */
async function get(ctx: ClientContext, path: string, headers: Record<string, string>): Promise<number> {
  try {
    const response = await ctx.fetch(`${ctx.baseUrl}${path}`, { headers });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

export const ATTRIBUTION: ClientProgram[] = [
  {
    name: 'health-probe-own-key',
    verdict: 'bad',
    rules: ['no-secrets-in-requests'],
    reason:
      'an SDK that adds ?api_key=<own key> to every URL, its health probe included (GET /v1/health, answered before identity), sent with its valid identity header; its searches carry the key in the header only',
    agent: 'agent-verified',
    async run(ctx) {
      const status = await get(ctx, `/v1/health?api_key=${ctx.apiKey}`, { 'x-agent-identity': ctx.token });
      if (status !== 200) throw new Error(`the health probe was answered ${status}`);
      await search(ctx, 'weather in paris');
    },
  },
  {
    name: 'health-probe-own-key-no-token',
    verdict: 'bad',
    rules: ['no-secrets-in-requests'],
    reason:
      'a readiness check that sends GET /v1/health?api_key=<own key> without any token: the key itself names the agent',
    agent: 'agent-verified',
    async run(ctx) {
      await get(ctx, `/v1/health?api_key=${ctx.apiKey}`, {});
      await search(ctx, 'weather in rome');
    },
  },
  {
    name: 'revoked-cached-token-resent',
    verdict: 'bad',
    rules: ['refresh-invalid-token'],
    reason:
      'starts with a token cached from an earlier run (revoked since), is refused 401 invalid_identity_token, sends the same token again, then mints a fresh one through /idp/token and carries on',
    agent: 'agent-verified',
    scenario: { staleToken: true },
    async run(ctx) {
      const stale = ctx.staleToken as string;
      for (let k = 0; k < 2; k++) {
        const refused = await call(ctx, 'POST', '/v1/web/search', { query: 'weather' }, { token: stale });
        if (refused.status !== 401) throw new Error(`the revoked token was answered ${refused.status}`);
      }
      const fresh = await mintOwnToken(ctx);
      await call(ctx, 'POST', '/v1/web/search', { query: 'weather' }, { token: fresh });
    },
  },
  {
    name: 'revoked-cached-token-refreshed',
    verdict: 'good',
    rules: [],
    reason:
      'starts with a token cached from an earlier run (revoked since), is refused 401 once, mints a fresh token through /idp/token at once and carries on with it',
    agent: 'agent-verified',
    scenario: { staleToken: true },
    async run(ctx) {
      const refused = await call(ctx, 'GET', '/v1/whoami', undefined, { token: ctx.staleToken as string });
      if (refused.status !== 401) throw new Error(`the revoked token was answered ${refused.status}`);
      const fresh = await mintOwnToken(ctx);
      await call(ctx, 'POST', '/v1/web/search', { query: 'weather' }, { token: fresh });
    },
  },
];
