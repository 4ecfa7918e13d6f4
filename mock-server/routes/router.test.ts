import { describe, expect, it } from 'vitest';
import type { Handler } from '../http/context.ts';
import { createRouter, routerFromTable, routingPath } from './router.ts';

const handler =
  (name: string): Handler =>
  () => ({ status: 200, headers: {}, body: name });

describe('router', () => {
  const router = createRouter();
  router.add('GET', '/v1/health', handler('health'));
  router.add('POST', '/__admin/agents', handler('create'));
  router.add('PATCH', '/__admin/agents/:id', handler('patch'));
  router.add('GET', '/__admin/agents/:id', handler('show'));

  it('matches plain paths and paths with parameters (one segment each, decoded)', () => {
    expect(router.match('GET', '/v1/health')).toMatchObject({ params: {} });
    expect(router.match('PATCH', '/__admin/agents/agent%2Dx')).toMatchObject({ params: { id: 'agent-x' } });
    expect(router.match('GET', '/__admin/agents/a/b')).toBeUndefined();
    expect(router.match('GET', '/__admin/agents/')).toBeUndefined();
    expect(router.match('GET', '/v1/health/')).toBeUndefined();
  });

  it('answers HEAD with GET, and tells the methods a known path allows', () => {
    expect(router.match('HEAD', '/v1/health')?.handler).toBeDefined();
    expect(router.match('DELETE', '/v1/health')).toEqual({ allow: ['GET', 'HEAD'] });
    expect(router.match('PUT', '/__admin/agents/x')).toEqual({ allow: ['PATCH', 'GET', 'HEAD'] });
  });

  it('routes on the path with escapes of unreserved characters decoded (RFC 3986 6.2.2.2), nothing else', () => {
    expect(routingPath('/%5F%5Fadmin/agents')).toBe('/__admin/agents');
    expect(routingPath('/v1/%77hoami')).toBe('/v1/whoami');
    expect(routingPath('/v1/a%2Fb')).toBe('/v1/a%2Fb');
    expect(routingPath('/v1/a%20b')).toBe('/v1/a%20b');
    expect(routingPath('/plain')).toBe('/plain');
  });

  it('removes dot segments and merges empty ones (every spelling of /__admin is /__admin), keeps case and a trailing slash', () => {
    for (const spelling of [
      '//__admin/journal',
      '/./__admin/journal',
      '/v1/../__admin/journal',
      '/v1/%2E%2E/__admin/journal',
      '/%2e/__admin/journal',
      '/__admin//journal',
      '///__admin/./journal',
      '/x/y/../../__admin/journal',
      '/../__admin/journal',
      '/%5F%5Fadmin/journal',
      '/__admin/journal/x/..',
    ])
      expect(routingPath(spelling).replace(/\/$/, ''), spelling).toBe('/__admin/journal');
    expect(routingPath('/__admin/.')).toBe('/__admin/');
    expect(routingPath('/__admin/journal/')).toBe('/__admin/journal/');
    expect(routingPath('/v1/health/')).toBe('/v1/health/');
    expect(routingPath('/__ADMIN/journal')).toBe('/__ADMIN/journal');
    expect(routingPath('/__admin./journal')).toBe('/__admin./journal');
    expect(routingPath('/..')).toBe('/');
    expect(routingPath('/v1/.well-known')).toBe('/v1/.well-known');
  });
});

describe('routerFromTable', () => {
  const table = [
    { method: 'GET', path: '/v1/health', id: 'health' },
    { method: 'PATCH', path: '/__admin/agents/:id', id: 'updateAgent' },
    { method: 'GET', path: '/__admin/agents/:id', id: 'getAgent' },
  ];
  const bindAll = (routes: { bind(id: string, h: Handler): void }) => {
    for (const { id } of table) routes.bind(id, handler(id));
  };

  it("adds each route of the table with the handler bound to its id, in the table's order", () => {
    const router = routerFromTable(table, bindAll);
    expect(router.match('GET', '/v1/health')?.handler?.({} as never, {})).toMatchObject({ body: 'health' });
    expect(router.match('GET', '/__admin/agents/a')?.handler?.({} as never, {})).toMatchObject({
      body: 'getAgent',
    });
    expect(router.match('PUT', '/__admin/agents/a')).toEqual({ allow: ['PATCH', 'GET', 'HEAD'] });
    expect(router.match('GET', '/v1/other')).toBeUndefined();
  });

  it('tells a registration function the routes served and their declarations', () => {
    routerFromTable(table, (routes) => {
      expect(routes.routes).toBe(table);
      expect(routes.declared('updateAgent')).toBe(table[1]);
      expect(() => routes.declared('nope')).toThrow(/no route "nope"/);
      bindAll(routes);
    });
  });

  it('refuses at construction a route without a handler, an unknown id, a second binding, a shared id', () => {
    expect(() => routerFromTable(table, (routes) => routes.bind('health', handler('h')))).toThrow(
      'PATCH /__admin/agents/:id ("updateAgent") has no handler',
    );
    expect(() => routerFromTable(table, (routes) => routes.bind('other', handler('o')))).toThrow(
      'no route "other" is served here',
    );
    expect(() =>
      routerFromTable(table, (routes) => {
        bindAll(routes);
        routes.bind('health', handler('again'));
      }),
    ).toThrow('"health" is bound twice');
    expect(() =>
      routerFromTable([...table, { method: 'GET', path: '/v2/health', id: 'health' }], bindAll),
    ).toThrow('two routes share an id');
  });
});
