/**
 * Spec section 4 (and section 9: every path under `/v1/`): the endpoints, each with the id the harness
 * names it by (journal `operation`, fault targets, conformance calls). Beside them, the endpoints of the
 * reference profile: the simulated identity provider (the instruction page at {auth_url} is the spec's,
 * its path `/idp/auth.md` is ours; token minting and verification are not shown in the spec) and the
 * OpenAPI document. The conformance suite calls only the spec's.
 */

import { SPEC_TOOL_NAMES, type SpecToolName, TOOL_NAMES, TOOLS, type ToolName } from './tools.ts';

/** The endpoints of section 4, in its order: `health`, `whoami`, `web.search`, `web.fetch`. */
export const SPEC_ENDPOINT_IDS: readonly SpecEndpointId[] = ['health', 'whoami', ...SPEC_TOOL_NAMES];

/** An endpoint of section 4. */
export type SpecEndpointId = 'health' | 'whoami' | SpecToolName;

/** How each endpoint of section 4 is called. */
export const SPEC_ENDPOINTS = {
  health: { method: 'GET', path: '/v1/health', auth: 'none' },
  whoami: { method: 'GET', path: '/v1/whoami', auth: 'token' },
  'web.search': { ...TOOLS['web.search'], auth: 'token' },
  'web.fetch': { ...TOOLS['web.fetch'], auth: 'token' },
} as const satisfies Record<SpecEndpointId, { method: string; path: string; auth: string }>;

/** The reference gateway's own built-in tools (`profile: 'gateway'`): served here, never required of others. */
const PROFILE_TOOL_ENDPOINTS = Object.fromEntries(
  TOOL_NAMES.filter((name) => TOOLS[name].profile !== 'spec').map((name) => [
    name,
    { ...TOOLS[name], auth: 'token' as const },
  ]),
) as {
  readonly [Name in Exclude<ToolName, SpecToolName>]: (typeof TOOLS)[Name] & { readonly auth: 'token' };
};

/** The reference profile's endpoints outside section 4 (never required of other gateways). */
const PROFILE_ENDPOINTS = {
  ...PROFILE_TOOL_ENDPOINTS,
  'idp.token': { method: 'POST', path: '/idp/token', auth: 'api-key' },
  'idp.verify': { method: 'POST', path: '/idp/verify', auth: 'none' },
  'idp.auth': { method: 'GET', path: '/idp/auth.md', auth: 'none' },
  openapi: { method: 'GET', path: '/openapi.json', auth: 'none' },
} as const;

/** Every endpoint by id. */
export const ENDPOINTS = { ...SPEC_ENDPOINTS, ...PROFILE_ENDPOINTS } as const;

/** Any endpoint the reference gateway answers (the admin API aside). */
export type EndpointId = keyof typeof ENDPOINTS;

/**
 * The endpoints that need an identity token (section 4: whoami and the tools): what rate limits count and
 * the conformance suite calls with a token.
 */
export const PROTECTED_ENDPOINTS = ['whoami', ...TOOL_NAMES] as const;

/** `whoami`, `web.search` or `web.fetch`. */
export type ProtectedEndpointId = (typeof PROTECTED_ENDPOINTS)[number];

/**
 * What a journal entry's `operation` is: the endpoint it called, a tool a gateway declares beyond the spec's
 * (its name, e.g. `web.extract`), or `other` (admin API, unknown path).
 */
export type JournalOperation = EndpointId | 'other' | (string & {});
