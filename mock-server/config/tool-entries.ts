import { z } from 'zod';
import { ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { TOOL_NAME_PATTERN, TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { toolRouteId } from '../tools/tool-route-id.ts';

// A tier name (the same rule as config/schema.ts's identifier; declared here so this module stands alone).
const tierName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'must be 1-64 letters, digits, ".", "_" or "-", starting alphanumeric',
  );

/** The fields of a tool's policy, without defaults (config schema and admin API). */
export const toolFields = {
  /** Tiers whose agents may call the tool (an agent's allowlist adds tools on top). */
  tiers: z.array(tierName),
  /** A globally disabled tool answers 403 access_denied to everyone. */
  enabled: z.boolean(),
  /** Simulated backend latency, in real milliseconds. */
  latency_ms: z.number().int().min(0).max(60_000),
};

/** An extra tool's path: under /v1/ (spec section 9), plain segments (no `:` parameters, no `..`). */
const toolPath = z
  .string()
  .max(200, 'must be at most 200 characters')
  .regex(
    /^\/v1(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/,
    'must be a path under /v1/ of plain segments (letters, digits, . _ ~ -), e.g. /v1/web/extract',
  );

/**
 * One entry of the config's `tools`: the policy every tool has (tiers, enabled, latency) and, for a tool
 * beyond the built-in web.search and web.fetch, what declares it: its path, a summary, its answer (a
 * fixture file, relative to the config file, answered as is; or `generator: seeded`, the default: generated
 * from the request), whether that answer is untrusted content, and the body fields that make two calls the
 * same request (default: the whole body). Its rate limits are rules of `rate_limits` naming it.
 */
export const toolEntrySchema = z.strictObject({
  tiers: toolFields.tiers.default([]),
  enabled: toolFields.enabled.default(true),
  latency_ms: toolFields.latency_ms.default(0),
  /** Extra tools only: where it is called (POST, JSON body). */
  path: toolPath.optional(),
  /** Extra tools only: one line for the OpenAPI document and the dashboard. */
  summary: z.string().min(1).max(200).optional(),
  /** Extra tools only: a fixture file's content, or an answer generated from the request (the default). */
  answer: z
    .union(
      [z.strictObject({ fixture: z.string().min(1) }), z.strictObject({ generator: z.literal('seeded') })],
      { error: 'must be { fixture: FILE } or { generator: seeded }' },
    )
    .optional(),
  /** Extra tools only: its answer is untrusted content (spec section 1, rule 1), as web.fetch's is. */
  untrusted: z.boolean().optional(),
  /** Extra tools only: the body fields whose values make two calls the same request (default: the whole body). */
  meaning: z.array(z.string().min(1).max(64)).min(1).optional(),
  /**
   * Extra tools only: a write-like operation (spec §7: callers send an idempotency key), so its OpenAPI
   * operation says `x-write-like: true` and `check --openapi` judges it by its key rather than plain retry safety.
   */
  write_like: z.boolean().optional(),
});

type ToolEntry = z.output<typeof toolEntrySchema>;

/** Names that are endpoints of the gateway, not tools (the journal's operations). */
const RESERVED = new Set(['health', 'whoami', 'other', 'openapi']);
const EXTRA_ONLY = ['path', 'summary', 'answer', 'untrusted', 'meaning', 'write_like'] as const;

/**
 * What the schema of one entry cannot see: the built-in tools are declared (the bundled config has them),
 * and keep their own path, answer and meaning; an extra tool has a path; no name is an endpoint's; no two
 * tools share a path or an OpenAPI operation id, and no path is another endpoint's.
 */
export function checkToolDeclarations(tools: Readonly<Record<string, ToolEntry>>, ctx: z.RefinementCtx) {
  const issue = (path: PropertyKey[], message: string) =>
    ctx.addIssue({ code: 'custom', path: ['tools', ...path], message });
  for (const name of TOOL_NAMES)
    if (!Object.hasOwn(tools, name)) issue([name], `the built-in tool ${name} must be declared (its policy)`);
  const paths = new Map<string, string>(Object.entries(ENDPOINTS).map(([id, e]) => [e.path, id]));
  const routeIds = new Map<string, string>();
  for (const [name, entry] of Object.entries(tools)) {
    if (name.length > 64 || !TOOL_NAME_PATTERN.test(name))
      issue(
        [name],
        `"${name}" is not a tool name: lower-case words joined by dots (letters, digits, _ or -), e.g. web.extract`,
      );
    else if (RESERVED.has(name) || name.startsWith('idp.'))
      issue([name], `"${name}" names an endpoint of the gateway, not a tool: choose another name`);
    const routeId = toolRouteId(name);
    const twin = routeIds.get(routeId);
    if (twin !== undefined)
      issue([name], `"${name}" and "${twin}" would share the OpenAPI operation id ${routeId}: rename one`);
    routeIds.set(routeId, name);
    if (Object.hasOwn(TOOLS, name)) {
      for (const key of EXTRA_ONLY)
        if (entry[key] !== undefined)
          issue([name, key], `${name} is built in: its ${key} is its own (remove ${key})`);
      continue;
    }
    if (entry.path === undefined) {
      issue(
        [name, 'path'],
        `a tool beyond ${TOOL_NAMES.join(' and ')} needs a path, e.g. /v1/${name.replaceAll('.', '/')}`,
      );
      continue;
    }
    const taken = paths.get(entry.path);
    if (taken !== undefined)
      issue([name, 'path'], `${entry.path} is already ${taken}'s path: give ${name} a path of its own`);
    paths.set(entry.path, name);
  }
}
