import { ADMIN_ROUTES, DASHBOARD_ROUTES } from './admin-route-table.ts';
import { IDP_ROUTES, OPENAPI_ROUTES, SPEC_ROUTES } from './public-route-table.ts';
import type { RouteDeclaration } from './route-declaration.ts';

/**
 * The gateway's one route table: every route it can serve, each declared once (method, path, id, summary,
 * body and query schemas, answers). The router (`routerFromTable`), the OpenAPI document, the admin index
 * (`GET /__admin`) and the endpoints a 404 names are all derived from it; the handlers are bound to it by id
 * in `routes/*-routes.ts`, `openapi/openapi-route.ts` and `dashboard/dashboard-routes.ts`.
 * `route-table.test.ts` checks both directions: every route is documented and indexed, every documented
 * route answers.
 */
export const ROUTES: readonly RouteDeclaration[] = [
  ...SPEC_ROUTES,
  ...IDP_ROUTES,
  ...OPENAPI_ROUTES,
  ...ADMIN_ROUTES,
  ...DASHBOARD_ROUTES,
];

/** Which optional parts a gateway serves (both by default, as the document describes them). */
export interface ServedParts {
  /** The simulated identity provider (off when tokens are verified elsewhere). */
  identityProvider?: boolean;
  /** The admin API and its dashboard (on with an admin key). */
  admin?: boolean;
  /** The routes of the tools its config declares beyond the spec's (`tools/extra-tool.ts`), after the spec's. */
  extraTools?: readonly RouteDeclaration[];
}

/** The routes a gateway with these parts serves, in the table's order (its extra tools after the spec's). */
export function servedRoutes(parts: ServedParts = {}): RouteDeclaration[] {
  const routes = [...SPEC_ROUTES, ...(parts.extraTools ?? []), ...ROUTES.slice(SPEC_ROUTES.length)];
  return routes.filter((route) => {
    if (route.group === 'identity provider') return parts.identityProvider !== false;
    if (route.group === 'admin' || route.group === 'dashboard') return parts.admin !== false;
    return true;
  });
}
