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

/**
 * What the vocabulary says of one tool, each part marked by where it comes from: `profile: 'spec'` for a
 * tool the spec names (its method and path are section 4's); `field` and `conformanceBody` are the reference
 * profile's choices (the spec shows no body fields), which other gateways are never held to.
 */
export interface ToolVocabulary {
  /** Who names the tool: the spec (section 1), or a gateway's own catalogue ("not shown" beyond it). */
  readonly profile: 'spec' | 'gateway';
  readonly method: 'POST';
  readonly path: string;
  /** Reference profile: the body field that carries what the call sends out (the query, the URL). */
  readonly field: string;
  /** Reference profile: the body the conformance suite calls the tool with unless told another. */
  readonly conformanceBody: Readonly<Record<string, unknown>>;
}

/** How each tool is called (the compiler holds this to exactly the names above). */
export const TOOLS = {
  'web.search': {
    profile: 'spec',
    method: 'POST',
    path: '/v1/web/search',
    field: 'query',
    conformanceBody: { query: 'agent tool gateway conformance' },
  },
  'web.fetch': {
    profile: 'spec',
    method: 'POST',
    path: '/v1/web/fetch',
    field: 'url',
    conformanceBody: { url: 'https://example.com/' },
  },
} as const satisfies Record<ToolName, ToolVocabulary>;

/**
 * A tool's name, as a gateway's catalogue may spell it (the spec's beyond section 1 are "not shown"): a
 * lower-case word, or dotted words (`web.extract`), each starting with a letter; 1-64 characters.
 */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)*$/;

/**
 * The tools the spec names (`profile: 'spec'`): what the conformance suite calls on every gateway by
 * default. A tool of the reference gateway's own (`profile: 'gateway'`) is served by it but never asked of
 * another gateway.
 */
export const SPEC_TOOL_NAMES = specToolNames(TOOLS) as readonly SpecToolName[];

/** A tool the spec names (`profile: 'spec'`). */
export type SpecToolName = {
  [Name in ToolName]: (typeof TOOLS)[Name]['profile'] extends 'spec' ? Name : never;
}[ToolName];

/** The names of the tools a vocabulary marks as the spec's, in its order. */
export function specToolNames<Name extends string>(
  tools: Readonly<Record<Name, Pick<ToolVocabulary, 'profile'>>>,
): Name[] {
  return (Object.keys(tools) as Name[]).filter((name) => tools[name].profile === 'spec');
}

/** Whether a string names a tool. */
export const isToolName = (name: string): name is ToolName => Object.hasOwn(TOOLS, name);
