/**
 * Spec section 1 ("Tools named in the interface: web search, web fetch") and section 4 (their endpoints):
 * the tools, by the names the harness gives them (config, journal, CLI), with the endpoint each is called on.
 * Their body fields are "not shown" in the spec: `field` is the reference profile's choice (the field that
 * carries the query or the URL), which the conformance suite only uses for its default bodies.
 */

/** Every tool, in the spec's order. */
export const TOOL_NAMES = ['web.search', 'web.fetch'] as const;

/** A tool's name: `web.search` or `web.fetch`. */
export type ToolName = (typeof TOOL_NAMES)[number];

/** How each tool is called (the compiler holds this to exactly the names above). */
export const TOOLS = {
  'web.search': { method: 'POST', path: '/v1/web/search', field: 'query' },
  'web.fetch': { method: 'POST', path: '/v1/web/fetch', field: 'url' },
} as const satisfies Record<ToolName, { method: 'POST'; path: string; field: string }>;

/** Whether a string names a tool. */
export const isToolName = (name: string): name is ToolName => Object.hasOwn(TOOLS, name);
