import { z } from 'zod';
import type { RouteDeclaration } from './route-declaration.ts';

const hints = new WeakMap<RouteDeclaration, string>();

/** A body's fields as the index shows them: `{id, name?}`, alternatives joined by `or`. */
function fieldsOf(schema: Record<string, unknown>): string | undefined {
  const alternatives = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (alternatives) {
    const each = alternatives.map(fieldsOf);
    return each.every(Boolean) ? each.join(' or ') : undefined;
  }
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (!properties) return undefined;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return `{${Object.keys(properties)
    .map((name) => (required.has(name) ? name : `${name}?`))
    .join(', ')}}`;
}

/** One line of the admin index: method, path with its query parameters, summary, body fields. */
function indexLine(route: RouteDeclaration): string {
  let line = hints.get(route);
  if (line !== undefined) return line;
  const query = route.query ? `?${Object.keys(route.query.shape).join('=&')}=` : '';
  const body = route.body
    ? fieldsOf(z.toJSONSchema(route.body.schema, { io: 'input', unrepresentable: 'any' }) as never)
    : undefined;
  line = `${route.method.padEnd(7)}${`${route.path}${query}`.padEnd(34)} ${route.summary}${body ? ` ${body}` : ''}`;
  hints.set(route, line);
  return line;
}

/**
 * The admin index that `GET /__admin` answers, derived from the route table: one line per admin route
 * (the dashboard's page, not its files), in the table's order.
 *
 * @example
 * adminIndex(ROUTES); // ['GET    /__admin                           List the admin endpoints', ...]
 */
export function adminIndex(routes: readonly RouteDeclaration[]): string[] {
  return routes
    .filter((route) => (route.group === 'admin' || route.group === 'dashboard') && !route.unlisted)
    .map(indexLine);
}

/** The spec's endpoints, as a 404 outside the admin API names them: `Endpoints: GET /v1/health, ...`. */
export function publicEndpoints(routes: readonly RouteDeclaration[]): string {
  const spec = routes.filter((route) => route.group === 'spec');
  return `Endpoints: ${spec.map((route) => `${route.method} ${route.path}`).join(', ')}.`;
}
