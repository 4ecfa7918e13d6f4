import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { type Call, call, search } from './support/call.ts';

const KEY = 'qa-admin-key-123';
const setup = () => {
  const gateway = createGateway({
    adminKey: KEY,
    clock: createClock({ frozen: true, startAt: Date.parse('2026-03-01T00:00:00Z') }),
  });
  const admin = (method: string, path: string, options: Call = {}) =>
    call(gateway, method, `/__admin${path}`, {
      ...options,
      headers: { 'x-admin-key': KEY, ...options.headers },
    });
  return { gateway, admin };
};

describe('admin API access', () => {
  it('is a 404 when no admin key is configured', async () => {
    const gateway = createGateway();
    for (const path of ['/__admin', '/__admin/agents', '/__admin/reset']) {
      const response = await call(gateway, 'GET', path, { headers: { 'x-admin-key': KEY } });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('not_found');
    }
  });

  it('401 without the key, 403 with a wrong one, 200 with X-Admin-Key or a Bearer token', async () => {
    const { gateway } = setup();
    expect((await call(gateway, 'GET', '/__admin/agents')).body.code).toBe('admin_key_required');
    expect((await call(gateway, 'GET', '/__admin/agents')).status).toBe(401);
    const wrong = await call(gateway, 'GET', '/__admin', { headers: { 'x-admin-key': 'nope-nope-nope' } });
    expect([wrong.status, wrong.body.code]).toEqual([403, 'admin_key_invalid']);
    expect(
      (await call(gateway, 'GET', '/__admin/agents', { headers: { authorization: `Bearer ${KEY}` } })).status,
    ).toBe(200);
  });

  it('the key only counts in X-Admin-Key or as a Bearer credential: a bare Authorization: KEY is refused', async () => {
    const { gateway } = setup();
    for (const authorization of [KEY, `Basic ${KEY}`, `Token ${KEY}`, `${KEY} Bearer`]) {
      const response = await call(gateway, 'GET', '/__admin/agents', { headers: { authorization } });
      expect([authorization, response.status, response.body.code]).toEqual([
        authorization,
        401,
        'admin_key_required',
      ]);
    }
  });

  it('a wrong method is a 405 with Allow (after the key check); an unknown admin path a 404 that says where to look', async () => {
    const { gateway, admin } = setup();
    const cases: [string, string, string][] = [
      ['PUT', '/clock', 'GET, HEAD'],
      ['GET', '/reset', 'POST'],
      ['PUT', '/agents/agent-early', 'GET, PATCH, HEAD'],
      ['GET', '/agents/agent-early/tokens', 'POST'],
      ['POST', '/journal', 'GET, DELETE, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await admin(method, path);
      expect([path, response.status, response.headers.get('allow'), response.body.code]).toEqual([
        path,
        405,
        allow,
        'method_not_allowed',
      ]);
    }
    expect((await call(gateway, 'PUT', '/__admin/clock')).status).toBe(401);
    const unknown = await admin('GET', '/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/GET \/__admin lists the admin endpoints/);
  });

  it('admin calls are not journaled; agent traffic is', async () => {
    const { gateway, admin } = setup();
    await admin('GET', '/agents');
    await call(gateway, 'GET', '/v1/health');
    // Another spelling of the admin path reaches the admin API, and is not journaled either.
    const encoded = await call(gateway, 'GET', '/%5F%5Fadmin/agents', { headers: { 'x-admin-key': KEY } });
    expect(encoded.status).toBe(200);
    await call(gateway, 'GET', '/%5F%5Fadmin/agents', { headers: { 'x-admin-key': 'wrong-key-123' } });
    const journal = await admin('GET', '/journal');
    expect((journal.body.entries as { path: string }[]).map((e) => e.path)).toEqual(['/v1/health']);
  });
});

describe('agents at run time (the transitions the spec leaves unshown)', () => {
  it('creates an agent with the default tier; it can mint tokens and call whoami', async () => {
    const { gateway, admin } = setup();
    const created = await admin('POST', '/agents', { body: { id: 'agent-new', name: 'New' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'agent-new',
      tier: 'early_access',
      allowlist: [],
      disabled: false,
    });
    const minted = await call(gateway, 'POST', '/idp/token', { body: { api_key: created.body.api_key } });
    const whoami = await call(gateway, 'GET', '/v1/whoami', { token: minted.body.token as string });
    expect(whoami.body).toMatchObject({ agent: { id: 'agent-new' }, tools: ['web.fetch'] });
    expect((await admin('POST', '/agents', { body: { id: 'agent-new' } })).status).toBe(409);
  });

  it('tier and allowlist changes take effect on existing tokens at once', async () => {
    const { gateway, admin } = setup();
    const token = gateway.mintToken('agent-early');
    expect((await search(gateway, token)).status).toBe(403);
    await admin('PATCH', '/agents/agent-early', { body: { tier: 'verified' } });
    expect((await search(gateway, token)).status).toBe(200);
    await admin('PATCH', '/agents/agent-early', { body: { tier: 'none', allowlist: ['web.search'] } });
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).body).toMatchObject({
      tier: 'none',
      tools: ['web.search'],
    });
  });

  it('disabling an agent and revoking its tokens give 401 invalid_identity_token with the reason', async () => {
    const { gateway, admin } = setup();
    const token = gateway.mintToken('agent-verified');
    await admin('POST', '/agents/agent-verified/revoke-tokens');
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).body).toMatchObject({
      code: 'invalid_identity_token',
      reason: 'revoked',
    });
    const fresh = await admin('POST', '/agents/agent-verified/tokens');
    expect((await call(gateway, 'GET', '/v1/whoami', { token: fresh.body.token as string })).status).toBe(
      200,
    );
    await admin('PATCH', '/agents/agent-verified', { body: { disabled: true } });
    expect(
      (await call(gateway, 'GET', '/v1/whoami', { token: fresh.body.token as string })).body.reason,
    ).toBe('agent_disabled');
  });

  it('bad changes are 4xx naming the problem', async () => {
    const { admin } = setup();
    expect((await admin('PATCH', '/agents/agent-early', { body: { tier: 'gold' } })).body.message).toMatch(
      /unknown tier "gold"/,
    );
    expect((await admin('PATCH', '/agents/agent-early', { body: { allowlist: ['web.mail'] } })).status).toBe(
      400,
    );
    expect((await admin('PATCH', '/agents/agent-early', { body: { colour: 'red' } })).status).toBe(400);
    expect((await admin('PATCH', '/agents/nobody', { body: {} })).status).toBe(404);
    expect((await admin('POST', '/agents', { body: 'not json' })).status).toBe(400);
  });
});

describe('tools, clock, journal, reset', () => {
  it('a tool disabled at run time is denied to everyone', async () => {
    const { gateway, admin } = setup();
    await admin('PATCH', '/tools/web.search', { body: { enabled: false } });
    const response = await search(gateway, gateway.mintToken('agent-verified'));
    expect(response.body).toMatchObject({ code: 'access_denied', reason: 'tool_disabled' });
    expect((await admin('PATCH', '/tools/web.mail', { body: {} })).status).toBe(404);
  });

  it('freezing and advancing the clock expires tokens without sleeping', async () => {
    const { gateway, admin } = setup();
    await admin('POST', '/clock/resume');
    await admin('POST', '/clock/freeze');
    const token = gateway.mintToken('agent-early');
    const advanced = await admin('POST', '/clock/advance', { body: { seconds: 3600 } });
    expect(advanced.body.frozen).toBe(true);
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).body.reason).toBe('expired');
    const set = await admin('POST', '/clock/set', { body: { time: '2030-01-01T00:00:00Z' } });
    expect(set.body.time).toBe('2030-01-01T00:00:00.000Z');
    expect((await admin('POST', '/clock/advance', { body: { ms: 1, seconds: 1 } })).status).toBe(400);
  });

  it('a clock time past year 9999 is a 400, and the gateway keeps answering', async () => {
    const { gateway, admin } = setup();
    for (const [path, body] of [
      ['/clock/set', { time: 9e15 }],
      ['/clock/set', { time: -1 }],
      ['/clock/advance', { seconds: 1e300 }],
      ['/clock/advance', { ms: 8e15 }],
    ] as const) {
      const response = await admin('POST', path, { body });
      expect([path, response.status, response.body.code]).toEqual([path, 400, 'invalid_request']);
    }
    const token = gateway.mintToken('agent-verified');
    expect((await call(gateway, 'GET', '/v1/whoami', { token })).status).toBe(200);
    expect((await admin('GET', '/journal')).status).toBe(200);
    expect((await admin('GET', '/clock')).body.time).toBe('2026-03-01T00:00:00.000Z');
  });

  it('the journal records status, code, agent and timing, redacts secrets and pages with since', async () => {
    const { gateway, admin } = setup();
    const token = gateway.mintToken('agent-verified');
    await call(gateway, 'GET', '/v1/whoami', { token });
    await call(gateway, 'GET', '/v1/whoami', { token: 'garbage' });
    await search(gateway, token, `leak ${token} and ak_verified_2b8d4f6a1c9e`);
    await call(gateway, 'POST', '/idp/token', { body: { api_key: 'ak_early_7c3e9a1b5d2f' } });
    const journal = await admin('GET', '/journal');
    const text = JSON.stringify(journal.body);
    expect(text).not.toContain(token);
    expect(text).not.toContain('ak_verified_2b8d4f6a1c9e');
    expect(text).not.toContain('ak_early_7c3e9a1b5d2f');
    const entries = journal.body.entries as Record<string, unknown>[];
    expect(entries.map((e) => [e.operation, e.status, e.code ?? null, e.agent ?? null])).toEqual([
      ['whoami', 200, null, 'agent-verified'],
      ['whoami', 401, 'invalid_identity_token', null],
      ['web.search', 200, null, 'agent-verified'],
      ['idp.token', 200, null, 'agent-early'],
    ]);
    expect(entries[2]).toMatchObject({
      query: 'leak [REDACTED:own_identity_token] and [REDACTED:own_api_key]',
      secrets: ['own_identity_token', 'own_api_key'],
    });
    expect(entries[0]?.token).toMatch(/^tok_[0-9a-f]{8}$/);
    const since = await admin('GET', `/journal?since=${entries[1]?.seq}&agent=agent-verified`);
    expect((since.body.entries as unknown[]).length).toBe(1);
    expect((await admin('GET', '/journal?limit=zero')).status).toBe(400);
  });

  it('reset restores agents, tools, limits and clears faults and the journal', async () => {
    const { gateway, admin } = setup();
    await admin('PATCH', '/agents/agent-early', { body: { tier: 'verified' } });
    await admin('PATCH', '/tools/web.fetch', { body: { enabled: false } });
    await admin('POST', '/faults', { body: { kind: 'drop', count: 5 } });
    await call(gateway, 'GET', '/v1/health');
    await admin('POST', '/reset');
    expect((await admin('GET', '/agents/agent-early')).body.tier).toBe('early_access');
    expect(
      ((await admin('GET', '/tools')).body.tools as Record<string, { enabled: boolean }>)['web.fetch']
        ?.enabled,
    ).toBe(true);
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
    expect((await admin('GET', '/journal')).body.entries).toEqual([]);
  });
});

describe('fault injection', () => {
  it('the next N calls of a route answer a 5xx with Retry-After, then normal service resumes', async () => {
    const { gateway, admin } = setup();
    const armed = await admin('POST', '/faults', {
      body: { match: { operation: 'web.search' }, kind: 'status', status: 503, retry_after: 2, count: 2 },
    });
    expect(armed.status).toBe(201);
    const token = gateway.mintToken('agent-verified');
    const results = [
      await search(gateway, token),
      await search(gateway, token),
      await search(gateway, token),
    ];
    expect(results.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(results[0]?.body).toMatchObject({ code: 'upstream_unavailable', fault: armed.body.id });
    expect(results[0]?.headers.get('retry-after')).toBe('2');
    expect(
      (await call(gateway, 'POST', '/v1/web/fetch', { token, body: { url: 'https://a.example' } })).status,
    ).toBe(200);
  });

  it('matches one agent only; without retry_after there is no Retry-After', async () => {
    const { gateway, admin } = setup();
    await admin('POST', '/faults', {
      body: { match: { agent: 'agent-early' }, kind: 'status', status: 500, count: 1 },
    });
    expect(
      (await call(gateway, 'GET', '/v1/whoami', { token: gateway.mintToken('agent-verified') })).status,
    ).toBe(200);
    const hit = await call(gateway, 'GET', '/v1/whoami', { token: gateway.mintToken('agent-early') });
    expect([hit.status, hit.body.code, hit.headers.get('retry-after')]).toEqual([
      500,
      'internal_error',
      null,
    ]);
  });

  it('a delay fault holds the response for real time, then answers normally', async () => {
    const { gateway, admin } = setup();
    await admin('POST', '/faults', {
      body: { match: { operation: 'health' }, kind: 'delay', delay_ms: 200, count: 1 },
    });
    const started = performance.now();
    expect((await call(gateway, 'GET', '/v1/health')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('a drop fault resets the connection over real HTTP, and is journaled with status 0', async () => {
    const { gateway, admin } = setup();
    await admin('POST', '/faults', { body: { match: { operation: 'health' }, kind: 'drop', count: 1 } });
    const server = await serve(gateway, { port: 0 });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const req = httpRequest(`${server.url}/v1/health`, (res) => resolve(`status ${res.statusCode}`));
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        req.end();
      });
      expect(outcome).toBe('ECONNRESET');
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
    const entries = (await admin('GET', '/journal')).body.entries as { status: number; fault?: string }[];
    expect(entries[0]).toMatchObject({ status: 0, fault: 'fault-1' });
  });

  it('refuses malformed faults with 400', async () => {
    const { admin } = setup();
    expect((await admin('POST', '/faults', { body: { kind: 'explode' } })).status).toBe(400);
    expect(
      (await admin('POST', '/faults', { body: { kind: 'status', status: 418, count: 1 } })).body.message,
    ).toMatch(/500, 502, 503 or 504/);
    expect((await admin('DELETE', '/faults/fault-99')).status).toBe(404);
  });
});

describe('scenarios through the admin API', () => {
  it('loads a bundled scenario by name, and reports it', async () => {
    const { gateway, admin } = setup();
    const loaded = await admin('POST', '/scenario', { body: { name: 'search-disabled' } });
    expect(loaded.body).toMatchObject({ scenario: { name: 'search-disabled' } });
    expect((await admin('GET', '/scenario')).body).toMatchObject({ scenario: { name: 'search-disabled' } });
    expect((await search(gateway, gateway.mintToken('agent-verified'))).body.reason).toBe('tool_disabled');
    const names = ((await admin('GET', '/scenarios')).body.scenarios as { name: string }[]).map(
      (s) => s.name,
    );
    expect(names).toContain('burst-429');
  });

  it('loads a scenario given inline, and refuses a bad one with 400 naming the path', async () => {
    const { gateway, admin } = setup();
    const inline = {
      name: 'ttl-2',
      description: 'Tokens live 2 s.',
      config: { identity: { token_ttl_seconds: 2 } },
    };
    expect((await admin('POST', '/scenario', { body: { scenario: inline } })).status).toBe(200);
    expect(gateway.idp.ttlSeconds).toBe(2);
    const bad = await admin('POST', '/scenario', {
      body: {
        scenario: { name: 'bad', description: 'x', config: { rate_limits: { rules: [{ name: 'r' }] } } },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/config\.rate_limits\.rules\[0\]/);
    expect((await admin('POST', '/scenario', { body: { name: 'no-such-scenario' } })).status).toBe(400);
  });

  it('reads no files: a path instead of a bundled name is a 400 that reveals nothing of the file', async () => {
    const { admin } = setup();
    for (const name of ['/etc/passwd', 'package.json', '../package', './fixtures/scenarios/burst-429.yaml']) {
      const response = await admin('POST', '/scenario', { body: { name } });
      expect([name, response.status, response.body.field]).toEqual([name, 400, 'name']);
      expect(String(response.body.message)).toMatch(/bundled: burst-429/);
      expect(JSON.stringify(response.body)).not.toMatch(/root:|devDependencies|Unrecognized/);
    }
  });

  it('a scenario may not change the corpus, which loads once at start', async () => {
    const { admin } = setup();
    const response = await admin('POST', '/scenario', {
      body: { scenario: { name: 'corpus', description: 'x', config: { corpus: { seed: 7 } } } },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/config\.corpus: a scenario cannot change the corpus/);
  });
});
