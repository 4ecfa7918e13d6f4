import { describe, expect, it } from 'vitest';
import { createClock } from '../clock.ts';
import { createGateway } from '../gateway.ts';
import type { RouteDeclaration } from './route-declaration.ts';
import { ROUTES, type ServedParts, servedRoutes } from './route-table.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document of any shape
type Json = Record<string, any>;
type Gateway = ReturnType<typeof createGateway>;

const KEY = 'route-table-admin-key';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** The routes the OpenAPI document may leave out: exactly the dashboard's page and files (a browser's). */
const UNDOCUMENTED = ['dashboard', 'dashboardSlash', 'dashboardScript', 'dashboardStyle'];

const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;
/** The router's form of a document's path: `{id}` is `:id`. */
const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

interface DocumentedOperation {
  method: string;
  path: string;
  id: string;
  statuses: number[];
}

/** Every operation of a served document, read from the JSON itself (not from the table). */
function operationsOf(document: Json): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(document.paths as Json))
    for (const method of HTTP_METHODS) {
      const operation = (item as Json)[method];
      if (!operation) continue;
      operations.push({
        method: method.toUpperCase(),
        path: routerPath(path),
        id: operation.operationId,
        statuses: Object.keys(operation.responses).map(Number),
      });
    }
  return operations;
}

const send = async (gateway: Gateway, method: string, path: string, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(new Request(`http://gw.test${path}`, { method, headers }));
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as Json };
};

const clock = () => createClock({ frozen: true, startAt: Date.parse('2026-06-01T00:00:00Z') });
const withAdmin = () => createGateway({ adminKey: KEY, clock: clock() });
const GATEWAYS: [string, () => Gateway, ServedParts][] = [
  ['with an admin key', withAdmin, {}],
  ['without one', () => createGateway({ clock: clock() }), { admin: false }],
];

describe('the route table, from the table to what the gateway says', () => {
  it.each(GATEWAYS)(
    'every route it serves is in the OpenAPI document it serves (%s), and nothing else is',
    async (_, make, parts) => {
      const served = await send(make(), 'GET', '/openapi.json');
      const documented = operationsOf(served.json());
      const expected = servedRoutes(parts).filter((route) => route.undocumented === undefined);
      expect(documented.map((op) => `${routeKey(op)} ${op.id}`).sort()).toEqual(
        expected.map((route) => `${routeKey(route)} ${route.id}`).sort(),
      );
    },
  );

  it('leaves out of the document only the dashboard files, each with its reason', () => {
    const left = ROUTES.filter((route) => route.undocumented !== undefined);
    expect(left.map((route) => route.id)).toEqual(UNDOCUMENTED);
    for (const route of left) expect(route.undocumented?.length, route.id).toBeGreaterThan(20);
  });

  it('GET /__admin lists every admin route (the dashboard page, not its files), and nothing else', async () => {
    const index = await send(withAdmin(), 'GET', '/__admin', { 'x-admin-key': KEY });
    const listed = (index.json().endpoints as string[]).map((line) => {
      const [method = '', target = ''] = line.split(/\s+/);
      return `${method} ${target.replace(/\?.*$/, '')}`;
    });
    const admin = ROUTES.filter((route) => route.group === 'admin' || route.group === 'dashboard');
    expect(listed).toEqual(admin.filter((route) => !route.unlisted).map(routeKey));
    expect(admin.filter((route) => route.unlisted).map((route) => route.id)).toEqual(UNDOCUMENTED.slice(1));
    // Each query parameter is named on its line.
    for (const route of admin.filter((r) => r.query)) {
      const line = (index.json().endpoints as string[]).find((l) => l.includes(`${route.path}?`)) ?? '';
      for (const name of Object.keys(route.query?.shape ?? {})) expect(line, route.id).toContain(`${name}=`);
    }
  });

  it.each(GATEWAYS)('a path no route serves is a 404 naming the spec endpoints (%s)', async (_, make) => {
    const answer = await send(make(), 'GET', '/v1/nowhere');
    expect(answer.status).toBe(404);
    const spec = ROUTES.filter((route) => route.group === 'spec').map(routeKey);
    expect(spec).toHaveLength(4);
    expect(answer.json().message).toBe(`No endpoint at GET /v1/nowhere. Endpoints: ${spec.join(', ')}.`);
  });
});

describe('the route table, from the document to the router', () => {
  /** A value for each path parameter that names something the gateway has. */
  const pathFor = (op: DocumentedOperation, faultId: string) =>
    op.path
      .replace('/agents/:id', '/agents/agent-early')
      .replace(':tool', 'web.search')
      .replace('/faults/:id', `/faults/${faultId}`);

  it.each(GATEWAYS)(
    'every documented operation answers, with a status it documents, never 404 or 405 (%s)',
    async (_, make) => {
      const gateway = make();
      const token = gateway.mintToken('agent-verified');
      const headers = { 'x-admin-key': KEY, 'x-agent-identity': token };
      const operations = operationsOf((await send(gateway, 'GET', '/openapi.json')).json());
      expect(operations.length).toBeGreaterThanOrEqual(8);
      const seen: string[] = [];
      for (const op of operations) {
        // A fault to disarm, armed where it can never strike (no such agent).
        let faultId = 'none';
        if (op.path.includes('/faults/:id')) {
          const armed = await gateway.fetch(
            new Request('http://gw.test/__admin/faults', {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ kind: 'status', status: 503, count: 1, match: { agent: 'nobody' } }),
            }),
          );
          const fault = (await armed.json()) as Json;
          expect(armed.status, JSON.stringify(fault)).toBe(201);
          faultId = fault.id;
        }
        // No body, no query: each operation's own refusal (400, 415) is as good an answer as its success.
        const answer = await send(gateway, op.method, pathFor(op, faultId), headers);
        seen.push(`${routeKey(op)} ${answer.status}`);
        expect([op.id, answer.status], answer.text.slice(0, 300)).not.toEqual([op.id, 404]);
        expect([op.id, answer.status]).not.toEqual([op.id, 405]);
        expect(op.statuses, `${op.id} answered ${answer.status}: ${answer.text.slice(0, 300)}`).toContain(
          answer.status,
        );
      }
      expect(seen).toHaveLength(operations.length);
    },
  );

  it('the dashboard routes the document leaves out answer too', async () => {
    const gateway = withAdmin();
    for (const route of ROUTES.filter((r: RouteDeclaration) => r.undocumented !== undefined)) {
      const answer = await send(gateway, route.method, route.path);
      expect([route.id, answer.status]).toEqual([route.id, route.ok.status]);
    }
  });
});
