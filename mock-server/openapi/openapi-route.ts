import { createBoundedMap } from '../bounded-map.ts';
import type { Handler } from '../http/context.ts';
import { respondText } from '../http/respond.ts';
import type { Routes } from '../routes/route-declaration.ts';
import { createOpenApiDocument, type OpenApiOptions } from './document.ts';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of what this gateway serves (the identity provider and the
 * admin API only when enabled), its server the origin the caller addressed. Built once per origin, compact
 * (`agent-gateway openapi` writes it indented).
 */
export function registerOpenApiRoute(routes: Routes, options: Omit<OpenApiOptions, 'serverUrl'>) {
  const byOrigin = createBoundedMap<string, string>(16);
  const handler: Handler = (ctx) => {
    ctx.note.operation = 'openapi';
    const origin = ctx.request.origin;
    let text = byOrigin.get(origin);
    if (text === undefined) {
      text = JSON.stringify(createOpenApiDocument({ ...options, serverUrl: origin }));
      byOrigin.set(origin, text);
    }
    return respondText(ctx, text, 'application/json; charset=utf-8', { 'cache-control': 'no-cache' });
  };
  routes.bind('openapi', handler);
}
