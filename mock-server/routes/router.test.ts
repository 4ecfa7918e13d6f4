import { describe, expect, it } from 'vitest';
import type { Handler } from '../http/context.ts';
import { createRouter, routingPath } from './router.ts';

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
});
