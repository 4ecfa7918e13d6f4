import { z } from 'zod';
import type { ProtectedEndpointId } from '../../vocabulary/endpoints.ts';
import { TOOL_NAME_PATTERN, TOOL_NAMES, type ToolName } from '../../vocabulary/tools.ts';
import { checkToolDeclarations, toolEntrySchema } from './tool-entries.ts';

/** The tools the reference gateway implements (the spec's); the config decides who may call them. */
export { TOOL_NAMES, type ToolName };

/** An operation a rate-limit rule counts: whoami or a tool (a built-in one, or one the config declares). */
export type Operation = ProtectedEndpointId | (string & {});

/** An agent, tier or rule id: 1-64 letters, digits, '.', '_' or '-', starting alphanumeric. */
const identifier = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'must be 1-64 letters, digits, ".", "_" or "-", starting alphanumeric',
  );

/** A tool's name as an allowlist or a rule names it; that the config declares it is checked below. */
const toolName = z
  .string()
  .max(64, 'must be at most 64 characters')
  .regex(TOOL_NAME_PATTERN, 'must be a tool name: lower-case words joined by dots, e.g. web.extract');

/** The fields of an agent, without defaults: the config schema and the admin API's patches share them. */
export const agentFields = {
  id: identifier,
  name: z.string().min(1).max(200),
  api_key: z.string().min(8, 'must be at least 8 characters').max(200),
  tier: identifier,
  allowlist: z.array(toolName),
  disabled: z.boolean(),
};

const agentSchema = z.strictObject({
  ...agentFields,
  name: agentFields.name.optional(),
  allowlist: agentFields.allowlist.default([]),
  disabled: agentFields.disabled.default(false),
});

export { toolFields } from './tool-entries.ts';

// The sliding window keeps one timestamp per admitted request, so its limit is capped.
const MAX_SLIDING_LIMIT = 100_000;
/** Most tools a config declares, built-in ones included (docs/reference.md). */
export const MAX_TOOLS = 100;

const rateLimitRuleSchema = z
  .strictObject({
    /** Names the rule in 429 bodies and RateLimit headers. */
    name: identifier,
    /** What one counter covers: each agent, each agent and operation, or everyone together. */
    scope: z.enum(['agent', 'agent_tool', 'global']),
    algorithm: z.enum(['token_bucket', 'fixed_window', 'sliding_window']),
    /** Requests per window; for the token bucket, its capacity (refilled at limit per window). */
    limit: z.number().int().min(1).max(1_000_000_000),
    window_seconds: z.number().min(0.001).max(86_400),
    /** Only these operations count: whoami or tools of this config (default: whoami and every tool). */
    operations: z
      .array(z.union([z.literal('whoami'), toolName], { error: 'must be whoami or a tool name' }))
      .min(1)
      .optional(),
    /** Only agents of these tiers count. */
    tiers: z.array(identifier).min(1).optional(),
    /** Only these agents count. */
    agents: z.array(identifier).min(1).optional(),
  })
  .refine((rule) => rule.algorithm !== 'sliding_window' || rule.limit <= MAX_SLIDING_LIMIT, {
    message: `sliding_window keeps one timestamp per request: limit must be at most ${MAX_SLIDING_LIMIT}`,
    path: ['limit'],
  })
  .refine(
    (rule) =>
      rule.algorithm !== 'token_bucket' || rule.limit * rule.window_seconds * 1000 <= Number.MAX_SAFE_INTEGER,
    {
      message: 'token_bucket counts exactly in integers: limit times window in ms must stay below 2^53',
      path: ['limit'],
    },
  );

const rateLimitsSchema = z.strictObject({
  /** How 429 answers say when to retry: delta-seconds (default) or an HTTP-date. */
  retry_after: z.enum(['seconds', 'http-date']).default('seconds'),
  /** Send IETF RateLimit-Policy / RateLimit headers on responses counted by a rule. */
  headers: z.boolean().default(true),
  rules: z.array(rateLimitRuleSchema).default([]),
  concurrency: z
    .strictObject({
      /** Most requests one agent may have in flight; more get 429 rate_limited (no Retry-After). null: no limit. */
      per_agent: z.number().int().min(1).max(100_000).nullable().optional(),
    })
    .default({}),
});

/**
 * The HTTP server's limits (the Node server; msw and in-process calls have no connections). Timeouts are
 * real milliseconds: a client that stalls is answered 408 and disconnected, whatever the gateway clock does.
 */
const serverSchema = z
  .strictObject({
    max_body_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(64 * 1024),
    /** The request line and headers must have arrived within this long of the connection's first byte
     * (a connection that sends nothing counts from when it opened); else 408 and the connection closes. */
    headers_timeout_ms: z.number().int().min(100).max(600_000).default(10_000),
    /** The whole request, body included, must have arrived within this long; else 408 request_timeout. */
    request_timeout_ms: z.number().int().min(100).max(3_600_000).default(30_000),
    /** A kept-alive connection with no request in progress is closed after this long. */
    idle_timeout_ms: z.number().int().min(100).max(600_000).default(5_000),
    /**
     * Most connections one client address may hold. A new one beyond it makes room with that address's
     * longest-idle connection (closed without losing a request sent on it); only when all of them have a
     * request in progress is it refused (429 rate_limited, reason: connections).
     */
    max_connections_per_client: z.number().int().min(1).max(1_000_000).default(1000),
  })
  .refine((server) => server.headers_timeout_ms <= server.request_timeout_ms, {
    message: 'must not be longer than request_timeout_ms (the headers are part of the request)',
    path: ['headers_timeout_ms'],
  });

/** The server settings when a config gives none (also for fetch handlers served by `serve`). */
export const DEFAULT_SERVER_SETTINGS = serverSchema.parse({});

export const configSchema = z
  .strictObject({
    server: serverSchema.default(DEFAULT_SERVER_SETTINGS),
    identity: z.strictObject({
      token_ttl_seconds: z
        .number()
        .int()
        .min(1)
        .max(30 * 24 * 3600),
      /**
       * HMAC key of tokens. Unset (the default): a random secret per process, so only that process mints
       * tokens it accepts. Set it to share tokens between processes; under 32 characters `serve` warns.
       */
      signing_secret: z.string().min(16, 'must be at least 16 characters').optional(),
      issuer: z.string().min(1).default('agent-gateway-idp'),
      /**
       * Wrong API keys accepted per minute from one client address at /idp/token; beyond, every token
       * request from it is 429 with Retry-After until the allowance refills. null: no limit.
       */
      token_failures_per_minute: z.number().int().min(1).nullable().default(30),
    }),
    tiers: z.record(identifier, z.strictObject({ description: z.string().default('') })),
    default_tier: identifier,
    /**
     * The built-in tools' policies, and any extra tool (name, path, tiers, answer), see tool-entries.ts. At
     * most MAX_TOOLS: the OpenAPI document, the dashboard and the route table hold every tool.
     */
    tools: z.record(z.string(), toolEntrySchema).refine((tools) => Object.keys(tools).length <= MAX_TOOLS, {
      error: (issue) =>
        `at most ${MAX_TOOLS} tools, built-in ones included (${Object.keys(issue.input as object).length} declared): every tool is in the OpenAPI document, the dashboard and the route table, which stay bounded by this cap`,
    }),
    agents: z.array(agentSchema),
    corpus: z
      .strictObject({
        /** Directory of search fixture files (*.json), relative to the config file. */
        search: z.string().optional(),
        /** Directory of fetch fixture pages (*.md with front matter), relative to the config file. */
        pages: z.string().optional(),
        /** Base seed of generated results: change it to get a different but still deterministic world. */
        seed: z.number().int().default(1),
      })
      .default({ seed: 1 }),
    rate_limits: rateLimitsSchema.default({
      retry_after: 'seconds',
      headers: true,
      rules: [],
      concurrency: {},
    }),
    idempotency: z
      .strictObject({
        /** How long a key and its stored response are kept, on the gateway clock. */
        ttl_seconds: z
          .number()
          .int()
          .min(1)
          .max(30 * 24 * 3600)
          .default(86_400),
        max_keys: z.number().int().min(1).max(1_000_000).default(10_000),
      })
      .default({ ttl_seconds: 86_400, max_keys: 10_000 }),
    store: z
      .strictObject({
        /**
         * Where shared state lives: `memory` (this process, the default) or `redis://HOST:PORT[/DB]`, so
         * several gateway instances (or `serve --workers`) act as one: limits, revocations, idempotency keys,
         * admin changes, faults, the clock, the signing secret and the journal.
         */
        url: z
          .string()
          .regex(/^(memory|rediss?:\/\/\S+)$/, 'must be memory or redis://HOST:PORT[/DB]')
          .default('memory'),
        /** Prefix of every Redis key, so gateways with different configs can share one Redis. */
        key_prefix: z
          .string()
          .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -')
          .default('agw'),
        /**
         * How long a request's concurrency slot outlives its instance: a live instance renews its slots, so
         * only a crashed instance's slots expire, after at most this long (real time).
         */
        lease_seconds: z.number().min(0.2).max(3600).default(30),
        /**
         * How long Redis may stay silent while a request waits for it before the request gets 503
         * state_store_unavailable (a Redis that keeps answering, however slowly, is waited for).
         */
        timeout_ms: z.number().int().min(10).max(60_000).default(2000),
      })
      .default({ url: 'memory', key_prefix: 'agw', lease_seconds: 30, timeout_ms: 2000 }),
    journal: z
      .strictObject({
        /** Most recent requests kept in memory for the admin API and client reports. */
        capacity: z.number().int().min(1).max(1_000_000).default(1000),
        /**
         * Bytes of each request and response body the journal keeps (with their headers, secrets redacted),
         * to see and export (HAR) an exchange in full; 0 keeps no headers or bodies.
         */
        body_bytes: z.number().int().min(0).max(1_048_576).default(2048),
      })
      .default({ capacity: 1000, body_bytes: 2048 }),
  })
  .superRefine((config, ctx) => {
    const tiers = Object.keys(config.tiers);
    const knownTiers = `known tiers: ${tiers.join(', ')}`;
    const checkTier = (tier: string, path: PropertyKey[]) => {
      if (!config.tiers[tier])
        ctx.addIssue({ code: 'custom', path, message: `unknown tier "${tier}" (${knownTiers})` });
    };
    checkTier(config.default_tier, ['default_tier']);
    checkToolDeclarations(config.tools, ctx);
    const tools = Object.keys(config.tools);
    const knownTools = `tools of this config: ${tools.join(', ')}`;
    const checkTool = (tool: string, path: PropertyKey[]) => {
      if (!Object.hasOwn(config.tools, tool))
        ctx.addIssue({ code: 'custom', path, message: `unknown tool "${tool}" (${knownTools})` });
    };
    for (const [name, tool] of Object.entries(config.tools)) {
      tool.tiers.forEach((tier, i) => {
        checkTier(tier, ['tools', name, 'tiers', i]);
      });
    }
    const seenIds = new Set<string>();
    const seenKeys = new Set<string>();
    config.agents.forEach((agent, i) => {
      checkTier(agent.tier, ['agents', i, 'tier']);
      agent.allowlist.forEach((tool, j) => {
        checkTool(tool, ['agents', i, 'allowlist', j]);
      });
      if (seenIds.has(agent.id))
        ctx.addIssue({
          code: 'custom',
          path: ['agents', i, 'id'],
          message: `duplicate agent id "${agent.id}"`,
        });
      if (seenKeys.has(agent.api_key))
        ctx.addIssue({ code: 'custom', path: ['agents', i, 'api_key'], message: 'duplicate api_key' });
      seenIds.add(agent.id);
      seenKeys.add(agent.api_key);
    });
    const ruleNames = new Set<string>();
    config.rate_limits.rules.forEach((rule, i) => {
      if (ruleNames.has(rule.name))
        ctx.addIssue({
          code: 'custom',
          path: ['rate_limits', 'rules', i, 'name'],
          message: `duplicate rule name "${rule.name}"`,
        });
      ruleNames.add(rule.name);
      rule.tiers?.forEach((tier, j) => {
        checkTier(tier, ['rate_limits', 'rules', i, 'tiers', j]);
      });
      rule.operations?.forEach((operation, j) => {
        if (operation !== 'whoami') checkTool(operation, ['rate_limits', 'rules', i, 'operations', j]);
      });
    });
  });

/** A validated gateway config, as the rest of the code sees it. */
export type GatewayConfig = z.output<typeof configSchema>;
/** A complete config before defaults are applied. */
export type GatewayConfigInput = z.input<typeof configSchema>;

type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;
/** What a config file or a config object may contain: any part of a config, laid over the bundled default. */
export type GatewayConfigOverlay = DeepPartial<GatewayConfigInput>;
export type AgentRecord = z.output<typeof agentSchema>;
export type ToolConfig = z.output<typeof toolEntrySchema>;
export type RateLimitRule = z.output<typeof rateLimitRuleSchema>;
export type ServerSettings = z.output<typeof serverSchema>;
