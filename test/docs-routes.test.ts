import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../mock-server/routes/route-table.ts';
import { routerFromTable } from '../mock-server/routes/router.ts';

const ROOT = new URL('../', import.meta.url);
const GUIDES = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Every `METHOD /path` a guide writes about the gateway (query, fragment and closing punctuation cut off). */
function mentions(text: string): string[] {
  const found = text.matchAll(
    /\b(GET|HEAD|POST|PUT|PATCH|DELETE)\s+(\/(?:v1|idp|__admin|openapi)[^\s`|),;'"<>\]]*)/g,
  );
  return [...found].map(
    ([, method, path = '']) => `${method} ${path.replace(/[?#].*$/, '').replace(/[.:]+$/, '')}`,
  );
}

// The table's router, each route answering its own id: a mention must land on a route, not on a 405 or 404.
const router = routerFromTable(ROUTES, (routes) => {
  for (const route of ROUTES) routes.bind(route.id, () => ({ status: 200, headers: {}, body: route.id }));
});

describe('the guides name only routes the gateway has', () => {
  it.each(GUIDES)('every METHOD /path in %s is a route of the route table', (file) => {
    const text = readFileSync(new URL(file, ROOT), 'utf8');
    const unknown = mentions(text).filter((mention) => {
      const [method = '', path = ''] = mention.split(' ');
      return !router.match(method, path)?.handler;
    });
    expect(unknown, `${file} names routes the gateway does not serve`).toEqual([]);
  });

  it('finds the mentions it checks (the guides name the spec endpoints and the admin API)', () => {
    const all = GUIDES.flatMap((file) => mentions(readFileSync(new URL(file, ROOT), 'utf8')));
    expect(all).toEqual(
      expect.arrayContaining(['POST /v1/web/search', 'GET /__admin', 'PATCH /__admin/agents/:id']),
    );
    expect(mentions('send `GET /v1/whoami?x=1.` then DELETE /__admin/faults/:id.')).toEqual([
      'GET /v1/whoami',
      'DELETE /__admin/faults/:id',
    ]);
  });
});
