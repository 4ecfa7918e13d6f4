import { type AnyToolDefinition, isBuiltInTool } from '../tools/index.ts';
import { json, type RouteDeclaration, TOOL_ERRORS } from './route-declaration.ts';

/** The routes of the tools a config declares beyond the spec's (the spec's are in `public-route-table.ts`). */
export const extraToolRoutes = (tools: readonly AnyToolDefinition[]): RouteDeclaration[] =>
  tools.filter((tool) => !isBuiltInTool(tool.name)).map(toolRoute);

/**
 * A tool's route, from its definition: POST at its path, an agent's token, its body and answer schemas,
 * every error a tool call may answer, safe to retry with an `Idempotency-Key`. The spec's tools are in the
 * `spec` group; a config's extra tools in the `reference profile` group (the spec does not show them).
 *
 * @example
 * toolRoute(webSearch); // { method: 'POST', path: '/v1/web/search', id: 'webSearch', ... }
 */
export function toolRoute(tool: AnyToolDefinition): RouteDeclaration {
  return {
    method: tool.vocabulary.method,
    path: tool.vocabulary.path,
    id: tool.routeId,
    summary: tool.summary,
    description: tool.description,
    group: isBuiltInTool(tool.name) ? 'spec' : 'reference profile',
    security: 'agent',
    body: json(tool.request.name, tool.request.schema),
    ok: {
      status: 200,
      description: tool.untrusted ? 'Its answer: untrusted content (spec section 1, rule 1).' : 'Its answer.',
      schema: json(tool.answer.name, tool.answer.schema),
      rateLimited: true,
    },
    errors: TOOL_ERRORS,
    idempotencyKey: true,
    ...(tool.writeLike && { writeLike: true }),
  };
}
