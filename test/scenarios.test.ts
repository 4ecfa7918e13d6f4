import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { listScenarios } from '../mock-server/scenarios/scenarios.ts';
import { call, search } from './support/call.ts';

const START = Date.parse('2026-05-01T10:00:00Z');
const withScenario = (name: string) =>
  createGateway({ scenario: name, clock: createClock({ frozen: true, startAt: START }) });
const fetchPage = (gateway: ReturnType<typeof createGateway>, token: string) =>
  call(gateway, 'POST', '/v1/web/fetch', {
    token,
    body: { url: 'https://docs.agent-gateway.example/welcome' },
  });

describe('bundled scenarios', () => {
  it('are valid, described, and named after their files', () => {
    const scenarios = listScenarios();
    expect(scenarios.map((s) => s.name).sort()).toEqual(
      [
        'burst-429',
        'concurrency-1',
        'flaky-5xx',
        'retry-after-http-date',
        'search-disabled',
        'token-expires-soon',
      ].sort(),
    );
    for (const s of scenarios) {
      expect(basename(s.file, '.yaml')).toBe(s.name);
      expect(s.description.length).toBeGreaterThan(20);
    }
  });

  it('burst-429: 5 tool calls per 10 s per agent, search and fetch together; the 6th gets delta-seconds Retry-After', async () => {
    const gateway = withScenario('burst-429');
    const token = gateway.mintToken('agent-verified');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await search(gateway, token)).status);
    for (let i = 0; i < 2; i++) statuses.push((await fetchPage(gateway, token)).status);
    const sixth = await search(gateway, token);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).status).toBe(200);
    expect((await search(gateway, gateway.mintToken('agent-allowlisted'))).status).toBe(200);
    gateway.clock.advance(Number(sixth.headers.get('retry-after')) * 1000);
    expect((await search(gateway, token)).status).toBe(200);
  });

  it('retry-after-http-date: the 4th tool call gets an HTTP-date Retry-After that is honoured', async () => {
    const gateway = withScenario('retry-after-http-date');
    const token = gateway.mintToken('agent-verified');
    for (let i = 0; i < 3; i++) expect((await search(gateway, token)).status).toBe(200);
    const fourth = await search(gateway, token);
    expect(fourth.status).toBe(429);
    const retryAt = Date.parse(fourth.headers.get('retry-after') ?? '');
    expect(Number.isNaN(retryAt)).toBe(false);
    expect(fourth.headers.get('retry-after')).toMatch(/GMT$/);
    gateway.clock.set(retryAt);
    expect((await search(gateway, token)).status).toBe(200);
  });

  it('token-expires-soon: tokens live 5 s on the virtual clock', async () => {
    const gateway = withScenario('token-expires-soon');
    const token = gateway.mintToken('agent-early');
    gateway.clock.advance(4_999);
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).status).toBe(200);
    gateway.clock.advance(1);
    const expired = await call(gateway, 'GET', '/v1/whoami', { token });
    expect(expired.body).toMatchObject({ code: 'invalid_identity_token', reason: 'expired' });
  });

  it('flaky-5xx: the 1st, 4th, 7th... search and fetch answer 503 with Retry-After 1', async () => {
    const gateway = withScenario('flaky-5xx');
    const token = gateway.mintToken('agent-verified');
    const searches = [];
    for (let i = 0; i < 7; i++) searches.push(await search(gateway, token));
    expect(searches.map((r) => r.status)).toEqual([503, 200, 200, 503, 200, 200, 503]);
    expect(searches[0]?.headers.get('retry-after')).toBe('1');
    expect(searches[0]?.body.code).toBe('upstream_unavailable');
    expect((await fetchPage(gateway, token)).status).toBe(503);
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).status).toBe(200);
  });

  it('search-disabled: search is denied to everyone (allowlist too), fetch works', async () => {
    const gateway = withScenario('search-disabled');
    for (const agent of ['agent-verified', 'agent-allowlisted']) {
      const denied = await search(gateway, gateway.mintToken(agent));
      expect(denied.body).toMatchObject({ code: 'access_denied', reason: 'tool_disabled' });
    }
    expect((await fetchPage(gateway, gateway.mintToken('agent-early'))).status).toBe(200);
  });

  it('concurrency-1: a second concurrent call gets 429 reason concurrency; sequential calls pass', async () => {
    const gateway = withScenario('concurrency-1');
    const token = gateway.mintToken('agent-verified');
    const [a, b] = await Promise.all([search(gateway, token), search(gateway, token)]);
    expect([a?.status, b?.status].sort()).toEqual([200, 429]);
    expect((a?.status === 429 ? a : b)?.body.reason).toBe('concurrency');
    expect((await search(gateway, token)).status).toBe(200);
  });

  it('a scenario can freeze the clock at a given time', () => {
    const gateway = createGateway({
      scenario: {
        name: 'frozen',
        description: 'frozen at new year',
        clock: { frozen: true, start: '2027-01-01T00:00:00Z' },
      },
    });
    expect(gateway.clock.frozen).toBe(true);
    expect(gateway.clock.now()).toBe(Date.parse('2027-01-01T00:00:00Z'));
  });

  it('reset goes back to how the gateway started: its scenario stays, one loaded since is dropped', async () => {
    const gateway = withScenario('burst-429');
    const token = gateway.mintToken('agent-verified');
    gateway.useScenario('search-disabled');
    expect((await search(gateway, token)).status).toBe(403);
    gateway.reset();
    expect(gateway.scenario?.name).toBe('burst-429');
    const statuses: number[] = [];
    for (let k = 0; k < 6; k++) statuses.push((await search(gateway, token)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const plain = createGateway();
    plain.useScenario('search-disabled');
    plain.reset();
    expect(plain.scenario).toBeUndefined();
    expect((await search(plain, plain.mintToken('agent-verified'))).status).toBe(200);
  });
});
