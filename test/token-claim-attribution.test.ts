import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import '../mock-server/testing-vitest.ts';
import { send } from './support/agents.ts';

/*
 * Every request is somebody's, in process too. An agent resends the token it cached from an earlier gateway
 * process (signed with that process's random secret), is refused 401, refreshes and resends. Over HTTP and
 * through the proxy the refused request is tied to the agent by its connection; in process (msw) there is no
 * connection, so the token's own claim (this gateway's format, naming a known agent, issued before this
 * gateway started) ties it, and the agent gets the same verdict on every path.
 */

const BASE = 'http://gateway.test';
const search = (token: string) => send(BASE, token, 'POST', '/v1/web/search', { query: 'q' });

describe('a refused token of an earlier gateway process, in process through msw', () => {
  const secret = (s: string) => ({ config: { identity: { signing_secret: s.repeat(32) } } });
  // The earlier process ran an hour ago: its tokens were issued before this gateway started.
  const hourAgo = () => createClock({ startAt: Date.now() - 3_600_000 });
  const gateway = createGateway(secret('a'));
  const earlier = createGateway({ ...secret('b'), clock: hourAgo() });
  const server = setupServer(...gatewayHandlers(gateway, { baseUrl: BASE }));
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterAll(() => server.close());

  it('is the agent its claim names: one refusal then a refresh passes refresh-invalid-token', async () => {
    const mark = gateway.journal.list().at(-1)?.seq ?? 0;
    expect(await search(earlier.mintToken('agent-verified'))).toBe(401);
    expect(await search(gateway.mintToken('agent-verified'))).toBe(200);
    const report = gateway.clientReport('agent-verified', { since: mark });
    const refusal = gateway.journal.list().find((e) => e.seq > mark && e.status === 401);
    expect(refusal).toMatchObject({ agent: 'agent-verified', attributed_by: 'token_claim' });
    expect(report.unattributed).toBeUndefined();
    const rule = report.rules.find((r) => r.id === 'refresh-invalid-token');
    expect(rule).toMatchObject({ violations: 0 });
    expect(rule).not.toHaveProperty('unobserved');
    expect(gateway).toFollowClientRules('agent-verified');
  });

  it('resending the refused token is seen and flagged, as over HTTP', async () => {
    const mark = gateway.journal.list().at(-1)?.seq ?? 0;
    const stale = earlier.mintToken('agent-verified');
    for (let i = 0; i < 3; i++) expect(await search(stale)).toBe(401);
    const report = gateway.clientReport('agent-verified', { since: mark });
    expect(report.violations.map((v) => v.rule)).toContain('refresh-invalid-token');
  });

  it('a token altered from one this gateway minted (a tester’s probe) is tied by no claim', async () => {
    const mark = gateway.journal.list().at(-1)?.seq ?? 0;
    const minted = gateway.mintToken('agent-verified');
    const altered = `${minted.slice(0, -1)}${minted.endsWith('A') ? 'B' : 'A'}`;
    expect(await search(altered)).toBe(401);
    const refusal = gateway.journal.list().find((e) => e.seq > mark && e.status === 401);
    expect(refusal?.attributed_by).toBeUndefined();
    expect(gateway.clientReport('agent-verified', { since: mark }).unattributed?.requests).toBe(1);
  });

  it('a claim naming no known agent ties nothing: the request stays nobody’s, counted with why', async () => {
    const mark = gateway.journal.list().at(-1)?.seq ?? 0;
    const stranger = createGateway({
      clock: hourAgo(),
      config: {
        ...secret('c').config,
        agents: [{ id: 'agent-elsewhere', api_key: 'ak_elsewhere_0123456789', tier: 'verified' }],
      },
    });
    expect(await search(stranger.mintToken('agent-elsewhere'))).toBe(401);
    const refusal = gateway.journal.list().find((e) => e.seq > mark && e.status === 401);
    expect(refusal?.attributed_by).toBeUndefined();
    expect(gateway.clientReport('agent-verified', { since: mark }).unattributed?.requests).toBe(1);
  });
});
