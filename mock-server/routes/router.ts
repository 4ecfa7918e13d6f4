import { GatewayError } from '../errors.ts';
import type { Handler } from '../http/context.ts';

/** What a path and method resolve to: a handler with its path parameters, or the methods the path allows. */
type RouteMatch =
  | { handler: Handler; params: Record<string, string> }
  | { handler?: undefined; allow: string[] }
  | undefined;

interface Route {
  methods: Map<string, Handler>;
  /** For paths with parameters: the segments, `:name` standing for one segment. */
  segments?: string[];
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * A small static route table. Plain paths are one map lookup (the tool calls); paths with `:param`
 * segments (the admin API) are matched segment by segment. `GET` answers `HEAD` too. The same table says
 * which methods a known path allows, so a wrong method is a 405 with `Allow` and there is no second list.
 *
 * @example
 * const router = createRouter();
 * router.add('GET', '/v1/health', health);
 * router.match('GET', '/v1/health'); // { handler: health, params: {} }
 */
export function createRouter() {
  const plain = new Map<string, Route>();
  const patterns: Route[] = [];
  const routeFor = (path: string): Route => {
    if (!path.includes('/:')) {
      const known = plain.get(path);
      if (known) return known;
      const route: Route = { methods: new Map() };
      plain.set(path, route);
      return route;
    }
    const segments = path.split('/');
    const key = segments.join('/');
    const known = patterns.find((r) => r.segments?.join('/') === key);
    if (known) return known;
    const route: Route = { methods: new Map(), segments };
    patterns.push(route);
    return route;
  };
  const paramsOf = (route: Route, path: string): Record<string, string> | undefined => {
    const segments = route.segments as string[];
    const parts = path.split('/');
    if (parts.length !== segments.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const expected = segments[i] as string;
      const part = parts[i] as string;
      if (expected.startsWith(':')) {
        if (part === '') return undefined;
        params[expected.slice(1)] = safeDecode(part);
      } else if (expected !== part) return undefined;
    }
    return params;
  };
  const allowOf = (route: Route) => {
    const allow = [...route.methods.keys()];
    return allow.includes('GET') ? [...allow, 'HEAD'] : allow;
  };

  return {
    add(method: string, path: string, handler: Handler) {
      routeFor(path).methods.set(method, handler);
    },
    match(method: string, path: string): RouteMatch {
      let route = plain.get(path);
      let params: Record<string, string> | undefined = NO_PARAMS;
      if (!route) {
        params = undefined;
        for (const candidate of patterns) {
          params = paramsOf(candidate, path);
          if (params) {
            route = candidate;
            break;
          }
        }
      }
      if (!route || !params) return undefined;
      const handler = route.methods.get(method) ?? (method === 'HEAD' ? route.methods.get('GET') : undefined);
      return handler ? { handler, params } : { allow: allowOf(route) };
    },
  };
}

type Router = ReturnType<typeof createRouter>;

/** A route as the router needs it: the rest of its declaration is for the document and the indexes. */
interface Routable {
  method: string;
  path: string;
  id: string;
}

/** Where a route's handler is bound to its declaration, by id, in the module that holds its state. */
export interface RouteBinder<R extends Routable = Routable> {
  /** The routes being served, in the table's order. */
  readonly routes: readonly R[];
  /** The declaration of a served route; throws for an id the table does not serve. */
  declared(id: string): R;
  /** Binds the handler of a served route, once; throws for an id the table does not serve. */
  bind(id: string, handler: Handler): void;
}

/**
 * The router of a route table: `register` binds a handler to each route by id (where the handler's state
 * lives), then every route is added in the table's order. A route of the table left without a handler, an
 * id the table does not serve, or one bound twice is an error at construction, never a 404 at run time.
 * The table is read once here; matching stays a map lookup.
 *
 * @example
 * const router = routerFromTable(ROUTES, (routes) => routes.bind('health', health));
 */
export function routerFromTable<R extends Routable>(
  table: readonly R[],
  register: (routes: RouteBinder<R>) => void,
): Router {
  const byId = new Map(table.map((route) => [route.id, route]));
  if (byId.size !== table.length) throw new Error('Route table: two routes share an id.');
  const handlers = new Map<string, Handler>();
  const declared = (id: string): R => {
    const route = byId.get(id);
    if (!route) throw new Error(`Route table: no route "${id}" is served here.`);
    return route;
  };
  register({
    routes: table,
    declared,
    bind(id, handler) {
      declared(id);
      if (handlers.has(id)) throw new Error(`Route table: route "${id}" is bound twice.`);
      handlers.set(id, handler);
    },
  });
  const router = createRouter();
  for (const route of table) {
    const handler = handlers.get(route.id);
    if (!handler)
      throw new Error(`Route table: ${route.method} ${route.path} ("${route.id}") has no handler.`);
    router.add(route.method, route.path, handler);
  }
  return router;
}

/** A 405 naming the methods the path answers. */
export function methodNotAllowed(method: string, path: string, allow: string[]): GatewayError {
  return new GatewayError('method_not_allowed', {
    message: `${method} is not allowed on ${path}; use ${allow.filter((m) => m !== 'HEAD').join(' or ')}.`,
    details: { allowed: allow },
    headers: { allow: allow.join(', ') },
  });
}

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

const UNRESERVED_ESCAPE = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])/g;

/**
 * The path routes are matched on, one rule for the gateway's router and the proxy's admin test (so no
 * spelling of `/__admin` reaches the one and not the other): percent-escapes of unreserved characters decoded
 * (RFC 3986 section 6.2.2.2: `/%5F%5Fadmin` is `/__admin`), dot segments removed (section 6.2.2.3, 5.2.4:
 * `/v1/../__admin`, `/./__admin`, `/__admin/.`), and empty segments merged (`//__admin`: as most servers and
 * proxies read it); a trailing slash is kept (`/v1/health/` is not `/v1/health`). Case is kept (`/__ADMIN` is
 * another path). A path with none of `%`, `//` or `/.` is returned as is.
 */
export function routingPath(path: string): string {
  const decoded = path.includes('%')
    ? path.replace(UNRESERVED_ESCAPE, (triplet) => String.fromCharCode(Number.parseInt(triplet.slice(1), 16)))
    : path;
  if (!decoded.includes('//') && !decoded.includes('/.')) return decoded;
  const segments = decoded.split('/');
  const kept: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (segment === '..') kept.pop();
    else if (segment !== '' && segment !== '.') kept.push(segment);
  }
  const last = segments.at(-1);
  const trailing = kept.length > 0 && (last === '' || last === '.' || last === '..');
  return `/${kept.join('/')}${trailing ? '/' : ''}`;
}
