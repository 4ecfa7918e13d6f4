import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { ConfigError } from '../mock-server/config/load-config.ts';
import { GatewayError } from '../mock-server/errors.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';
import { faultSpecSchema } from '../mock-server/scenarios/faults.ts';
import type { ScenarioInput } from '../mock-server/scenarios/scenarios.ts';
import { TOOL_NAMES } from '../vocabulary/tools.ts';
import { adminCaller, call, search } from './support/call.ts';
import { EXTRACT_502_ONCE, extract } from './support/extra-tool.ts';

/*
 * A fault can name any tool the gateway has: the built-in ones and the extra tools its config declares.
 * One that names a tool the gateway does not have is refused (400 invalid_request on the admin API, an
 * invalid scenario, a GatewayError from `faults.add`), never armed to strike nothing, never a 5xx.
 */

const ADMIN = 'admin-key-for-extra-tool-faults';
const dir = mkdtempSync(join(tmpdir(), 'extra-tool-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const configFile = join(dir, 'gateway.yaml');
writeFileSync(configFile, 'tools:\n  web.extract: { path: /v1/web/extract, tiers: [verified] }\n');

const admin = adminCaller(ADMIN);

describe('a fault on an extra tool', () => {
  it('is armed through the admin API and strikes that tool only', async () => {
    const gateway = createGateway({ configFile, adminKey: ADMIN, log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const armed = await admin(gateway, 'POST', '/faults', EXTRACT_502_ONCE);
    expect(armed.status).toBe(201);
    expect(armed.body).toMatchObject({ match: { operation: 'web.extract' } });
    expect((await search(gateway, token, 'agent gateway')).status).toBe(200);
    const struck = await extract(gateway, token);
    expect(struck.status).toBe(502);
    expect(struck.body).toMatchObject({ code: 'upstream_error', fault: 'fault-1' });
    // Spent after one strike.
    expect((await extract(gateway, token)).status).toBe(200);
    const journal = gateway.journal.list({ agent: 'agent-verified' });
    expect(journal.filter((e) => e.fault === 'fault-1').map((e) => e.operation)).toEqual(['web.extract']);
  });

  it('naming a tool the gateway does not have is a 400 naming the field and the gateway targets', async () => {
    const gateway = createGateway({ configFile, adminKey: ADMIN, log: () => {} });
    const refused = await admin(gateway, 'POST', '/faults', {
      match: { operation: 'web.extrakt' },
      kind: 'status',
      count: 1,
    });
    expect(refused.status).toBe(400);
    const body = refused.body;
    expect(body).toMatchObject({
      code: 'invalid_request',
      field: 'match.operation',
      targets: ['health', 'whoami', ...TOOL_NAMES, 'web.extract'],
    });
    expect(body.message).toMatch(/^match\.operation: .*"web\.extrakt"/);
    // Not a name at all: the schema's 400.
    const malformed = await admin(gateway, 'POST', '/faults', {
      match: { operation: 'Web Extract!' },
      kind: 'delay',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ field: 'match.operation' });
    expect((await admin(gateway, 'GET', '/faults')).body).toEqual({ faults: [] });
    // A gateway without the extra tool refuses a fault on it.
    const bare = createGateway({ adminKey: ADMIN, log: () => {} });
    const onBare = await admin(bare, 'POST', '/faults', {
      match: { operation: 'web.extract' },
      kind: 'drop',
      count: 1,
    });
    expect(onBare.status).toBe(400);
  });

  it('is armed from a scenario (file or admin API), and a scenario naming an unknown tool is invalid', async () => {
    const scenario: ScenarioInput = {
      name: 'extract-down',
      description: 'web.extract answers 503 twice',
      faults: [{ match: { operation: 'web.extract' }, kind: 'status', status: 503, count: 2 }],
    };
    const gateway = createGateway({ configFile, scenario, adminKey: ADMIN, log: () => {} });
    const token = gateway.mintToken('agent-verified');
    expect((await extract(gateway, token)).status).toBe(503);
    expect((await extract(gateway, token)).status).toBe(503);
    expect((await extract(gateway, token)).status).toBe(200);

    const stray: ScenarioInput = {
      ...scenario,
      faults: [{ kind: 'status', count: 2, match: { operation: 'web.nothing' } }],
    };
    expect(() => createGateway({ configFile, scenario: stray, log: () => {} })).toThrow(ConfigError);
    expect(() => createGateway({ configFile, scenario: stray, log: () => {} })).toThrow(
      /faults\[0\]\.match\.operation: this gateway has no endpoint or tool "web\.nothing"/,
    );
    // Over the admin API: a 400 naming the scenario's issue; the scenario in force is kept.
    const loaded = await admin(gateway, 'POST', '/scenario', { scenario: stray });
    expect(loaded.status).toBe(400);
    expect(loaded.body).toMatchObject({
      code: 'invalid_request',
      field: 'scenario',
      issues: [{ path: 'faults[0].match.operation' }],
    });
    expect((await admin(gateway, 'POST', '/scenario', { scenario })).body).toMatchObject({
      scenario: { name: 'extract-down' },
    });
    expect((await extract(gateway, token)).status).toBe(503);
  });

  it('faults.add refuses a tool the gateway does not have, with the same error', () => {
    const gateway = createGateway({ configFile, log: () => {} });
    const add = (operation: string) =>
      gateway.faults.add(faultSpecSchema.parse({ match: { operation }, kind: 'delay', delay_ms: 1 }));
    expect(add('web.extract').match.operation).toBe('web.extract');
    expect(() => add('web.extrakt')).toThrow(GatewayError);
    expect(() => add('web.extrakt')).toThrow(/match\.operation: this gateway has no endpoint or tool/);
    expect(gateway.faults.list()).toHaveLength(1);
  });

  it('faults.add fills the defaults the admin API and scenarios fill: a fault without `every` strikes', async () => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const armed = gateway.faults.add({
      match: { operation: 'web.fetch' },
      kind: 'status',
      status: 503,
      count: 3,
    });
    expect(armed).toMatchObject({ every: 1, delay_ms: 1000, status: 503, count: 3 });
    const fetchPage = () =>
      call(gateway, 'POST', '/v1/web/fetch', { token, body: { url: 'https://example.com/' } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetchPage()).status);
    expect(statuses).toEqual([503, 503, 503, 200]);
    expect(gateway.faults.list()).toEqual([]);
    // A fault the schema refuses is refused by the library too, naming the field (never armed as NaN).
    expect(() => gateway.faults.add({ kind: 'status', status: 503 })).toThrow(/^count: /);
    expect(() => gateway.faults.add({ kind: 'status', count: 1, every: 0 })).toThrow(GatewayError);
  });

  it('strikes on the proxy, which answers it itself instead of forwarding', async () => {
    const target = createGateway({ configFile, log: () => {} });
    const served = await serve(target, { port: 0, log: () => {} });
    const proxy = createProxy({
      target: served.url,
      adminKey: ADMIN,
      config: { tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } } },
      log: () => {},
    });
    const front = await serve(proxy, { port: 0, log: () => {} });
    try {
      const armed = await admin(front.url, 'POST', '/faults', {
        match: { operation: 'web.extract' },
        kind: 'status',
        status: 504,
        count: 1,
      });
      expect(armed.status).toBe(201);
      const token = target.mintToken('agent-verified');
      const struck = await extract(front.url, token);
      expect(struck.status).toBe(504);
      expect(struck.body).toMatchObject({ code: 'upstream_timeout' });
      expect((await extract(front.url, token)).status).toBe(200);
      // The target saw only the second call: the first was the proxy's own answer.
      const seen = target.journal
        .list({ agent: 'agent-verified' })
        .filter((e) => e.operation === 'web.extract');
      expect(seen).toHaveLength(1);
      const unknown = await admin(front.url, 'POST', '/faults', {
        match: { operation: 'docs.lookup' },
        kind: 'drop',
        count: 1,
      });
      expect(unknown.status).toBe(400);
    } finally {
      await front.close();
      proxy.close();
      await served.close();
    }
  });
});
