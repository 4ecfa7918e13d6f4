import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
import { INVALID_TOKEN_REASONS } from '../identity/identity-provider.ts';
import { verifyResponseSchema } from '../identity/verifier.ts';
import { fetchRequestSchema } from '../providers/web-fetch.ts';
import { searchRequestSchema } from '../providers/web-search.ts';
import {
  advanceSchema,
  agentCreateSchema,
  agentPatchSchema,
  exportQuery,
  findingsQuery,
  journalExportQuery,
  journalQuery,
  reportQuery,
  scenarioRequestSchema,
  setSchema,
  toolPatchSchema,
} from '../routes/admin-routes.ts';
import { tokenRequestSchema, verifyRequestSchema } from '../routes/idp-routes.ts';
import { faultSpecSchema } from '../scenarios/faults.ts';
import * as answers from './response-schemas.ts';

/** The version of the package (and of the reference profile it documents). */
const VERSION = '0.1.0';

type Security = 'agent' | 'admin' | 'none';

/** One operation of the reference profile, as the document describes it. */
export interface OperationDoc {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path, `{param}` for a path parameter. */
  path: string;
  id: string;
  summary: string;
  description?: string;
  tag: 'spec' | 'identity provider' | 'admin' | 'reference profile';
  security: Security;
  /** The schema that validates the request body (input side: defaults make fields optional). */
  body?: { name: string; schema: z.ZodType };
  /** The schema that validates the query string, one parameter per field. */
  query?: z.ZodObject;
  /** Text query parameters without a schema of their own (the instruction page's). */
  textQuery?: { name: string; required: boolean; description: string }[];
  ok: {
    status: number;
    description: string;
    /** Named component schema of a JSON answer, or a text answer's media types. */
    schema?: { name: string; schema: z.ZodType };
    text?: string[];
    rateLimited?: boolean;
  };
  /** Every error code this operation answers with (beyond 405 and 404 for other paths and methods). */
  errors: readonly ErrorCode[];
  idempotencyKey?: boolean;
}

const AGENT_AUTH: ErrorCode[] = [
  'missing_identity_token',
  'invalid_identity_token',
  'identity_provider_unavailable',
];
// request_timeout: a body that stalls past server.request_timeout_ms is answered by the pipeline.
const BODY: ErrorCode[] = [
  'invalid_request',
  'payload_too_large',
  'unsupported_media_type',
  'request_timeout',
];
const FAULTS: ErrorCode[] = ['internal_error', 'upstream_error', 'upstream_unavailable', 'upstream_timeout'];
/** Only with a shared store (`--store redis://...`) that does not answer. */
const STORE: ErrorCode[] = ['state_store_unavailable', 'state_store_conflict'];
const ADMIN: ErrorCode[] = ['admin_key_required', 'admin_key_invalid', 'internal_error', ...STORE];
const TOOL_ERRORS: ErrorCode[] = [
  ...AGENT_AUTH,
  'access_denied',
  ...BODY,
  'rate_limited',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  ...FAULTS,
  ...STORE,
];

const json = (name: string, schema: z.ZodType) => ({ name, schema });

/** The operations of the spec (section 4), the identity provider and the document itself. */
const PUBLIC_OPERATIONS: OperationDoc[] = [
  {
    method: 'get',
    path: '/v1/health',
    id: 'health',
    summary: 'Health check, without any identity token (spec section 4 rule 1)',
    tag: 'spec',
    security: 'none',
    ok: { status: 200, description: 'The gateway is up.', schema: json('Health', answers.healthSchema) },
    errors: FAULTS,
  },
  {
    method: 'get',
    path: '/v1/whoami',
    id: 'whoami',
    summary: 'The caller and its policy tier, for any valid token (spec section 4 rule 2)',
    tag: 'spec',
    security: 'agent',
    ok: {
      status: 200,
      description: 'The identity of the token.',
      schema: json('Whoami', answers.whoamiSchema),
      rateLimited: true,
    },
    errors: [...AGENT_AUTH, 'rate_limited', ...FAULTS, ...STORE],
  },
  {
    method: 'post',
    path: '/v1/web/search',
    id: 'webSearch',
    summary: 'Web search (spec section 4; safe to retry)',
    description:
      'Known queries answer from fixtures/search, others with seeded generated results: a retry gets the same body.',
    tag: 'spec',
    security: 'agent',
    body: json('SearchRequest', searchRequestSchema),
    ok: {
      status: 200,
      description: 'Search results.',
      schema: json('SearchResponse', answers.searchResponseSchema),
      rateLimited: true,
    },
    errors: TOOL_ERRORS,
    idempotencyKey: true,
  },
  {
    method: 'post',
    path: '/v1/web/fetch',
    id: 'webFetch',
    summary: 'Web fetch (spec section 4; safe to retry)',
    description: 'The content is untrusted input (spec section 1, rule 1).',
    tag: 'spec',
    security: 'agent',
    body: json('FetchRequest', fetchRequestSchema),
    ok: {
      status: 200,
      description: 'The page.',
      schema: json('FetchResponse', answers.fetchResponseSchema),
      rateLimited: true,
    },
    errors: TOOL_ERRORS,
    idempotencyKey: true,
  },
  {
    method: 'post',
    path: '/idp/token',
    id: 'idpToken',
    summary: 'Exchange an API key for a short-lived identity token',
    tag: 'identity provider',
    security: 'none',
    body: json('TokenRequest', tokenRequestSchema),
    ok: {
      status: 200,
      description: 'A fresh token.',
      schema: json('TokenResponse', answers.tokenResponseSchema),
    },
    errors: [...BODY, 'invalid_api_key', 'agent_disabled', 'internal_error'],
  },
  {
    method: 'post',
    path: '/idp/verify',
    id: 'idpVerify',
    summary: 'Verify a token (what a remote verifier asks)',
    tag: 'identity provider',
    security: 'none',
    body: json('VerifyRequest', verifyRequestSchema),
    ok: {
      status: 200,
      description: 'The verdict on the token.',
      schema: json('VerifyResponse', verifyResponseSchema),
    },
    errors: [...BODY, 'internal_error'],
  },
  {
    method: 'get',
    path: '/idp/auth.md',
    id: 'idpInstructions',
    summary: 'The token instruction page (spec section 4): Markdown, or HTML for a browser',
    tag: 'identity provider',
    security: 'none',
    textQuery: [
      { name: 'app', required: true, description: 'Name of the calling application.' },
      { name: 'endpoint', required: true, description: 'The full address of the whoami endpoint.' },
      { name: 'header', required: true, description: 'The identity header, X-Agent-Identity.' },
    ],
    ok: { status: 200, description: 'How to obtain a token.', text: ['text/markdown', 'text/html'] },
    errors: ['invalid_request', 'internal_error'],
  },
  {
    method: 'get',
    path: '/openapi.json',
    id: 'openapi',
    summary: 'This document',
    tag: 'reference profile',
    security: 'none',
    ok: { status: 200, description: 'The OpenAPI 3.1 document of this gateway.', text: ['application/json'] },
    errors: ['internal_error'],
  },
];

const agentId = 'id';
/** The admin API under /__admin (enabled by an admin key). */
const ADMIN_OPERATIONS: OperationDoc[] = [
  ['get', '', 'adminIndex', 'List the admin endpoints', json('EndpointList', answers.endpointListSchema)],
  ['get', '/agents', 'listAgents', 'Agents, with their API keys', json('Agents', answers.agentsSchema)],
  [
    'get',
    `/agents/{${agentId}}`,
    'getAgent',
    'One agent',
    json('Agent', answers.agentViewSchema),
    ['not_found'],
  ],
  [
    'post',
    `/agents/{${agentId}}/revoke-tokens`,
    'revokeTokens',
    'Revoke every token the agent holds',
    json('Agent', answers.agentViewSchema),
    ['not_found'],
  ],
  [
    'post',
    `/agents/{${agentId}}/tokens`,
    'mintToken',
    'Mint a token for the agent',
    json('MintedToken', answers.mintedTokenSchema),
    ['not_found'],
    201,
  ],
  ['get', '/tools', 'listTools', 'Tool settings', json('Tools', answers.toolsSchema)],
  ['get', '/limits', 'getLimits', 'The rate limits in force', json('RateLimits', answers.limitsSchema)],
  ['get', '/clock', 'getClock', 'The virtual clock', json('Clock', answers.clockSchema)],
  ['post', '/clock/freeze', 'freezeClock', 'Freeze the clock', json('Clock', answers.clockSchema)],
  ['post', '/clock/resume', 'resumeClock', 'Let the clock run again', json('Clock', answers.clockSchema)],
  ['post', '/clock/reset', 'resetClock', 'Back to real time', json('Clock', answers.clockSchema)],
  ['get', '/faults', 'listFaults', 'Armed faults', json('Faults', answers.faultsSchema)],
  ['delete', '/faults', 'clearFaults', 'Disarm every fault', json('Faults', answers.faultsSchema)],
  [
    'delete',
    '/faults/{id}',
    'disarmFault',
    'Disarm one fault',
    json('Faults', answers.faultsSchema),
    ['not_found'],
  ],
  [
    'delete',
    '/journal',
    'clearJournal',
    'Empty the journal',
    json('EmptyJournal', answers.emptyJournalSchema),
  ],
  ['get', '/scenarios', 'listScenarios', 'Bundled scenarios', json('Scenarios', answers.scenariosSchema)],
  [
    'get',
    '/scenario',
    'getScenario',
    'The scenario in force',
    json('ScenarioInForce', answers.scenarioSchema),
  ],
  [
    'post',
    '/reset',
    'reset',
    'Back to how the gateway started (its config and --scenario); faults and journal cleared',
    json('Reset', answers.resetSchema),
  ],
].map(([method, path, id, summary, ok, more = [], status = 200]) => ({
  method: method as OperationDoc['method'],
  path: `/__admin${path as string}`,
  id: id as string,
  summary: summary as string,
  tag: 'admin' as const,
  security: 'admin' as const,
  ok: {
    status: status as number,
    description: summary as string,
    schema: ok as OperationDoc['ok']['schema'],
  },
  errors: [...ADMIN, ...(more as ErrorCode[])],
}));

const adminWithBody = (
  method: OperationDoc['method'],
  path: string,
  id: string,
  summary: string,
  body: OperationDoc['body'],
  ok: OperationDoc['ok']['schema'],
  more: ErrorCode[] = [],
  status = 200,
): OperationDoc => ({
  method,
  path: `/__admin${path}`,
  id,
  summary,
  tag: 'admin',
  security: 'admin',
  body,
  ok: { status, description: summary, schema: ok },
  errors: [...ADMIN, ...BODY, ...more],
});

ADMIN_OPERATIONS.push(
  adminWithBody(
    'post',
    '/agents',
    'createAgent',
    'Create an agent (tier defaults to default_tier)',
    json('AgentCreate', agentCreateSchema),
    json('Agent', answers.agentViewSchema),
    ['already_exists'],
    201,
  ),
  adminWithBody(
    'patch',
    '/agents/{id}',
    'updateAgent',
    'Change an agent, effective at once for its tokens',
    json('AgentPatch', agentPatchSchema),
    json('Agent', answers.agentViewSchema),
    ['not_found'],
  ),
  adminWithBody(
    'patch',
    '/tools/{tool}',
    'updateTool',
    'Change a tool',
    json('ToolPatch', toolPatchSchema),
    json('ToolPatched', answers.toolPatchedSchema),
    ['not_found'],
  ),
  adminWithBody(
    'post',
    '/clock/advance',
    'advanceClock',
    'Move the clock forward ({ms} or {seconds})',
    json('ClockAdvance', advanceSchema),
    json('Clock', answers.clockSchema),
  ),
  adminWithBody(
    'post',
    '/clock/set',
    'setClock',
    'Set the clock (ISO 8601 or epoch ms)',
    json('ClockSet', setSchema),
    json('Clock', answers.clockSchema),
  ),
  adminWithBody(
    'post',
    '/faults',
    'armFault',
    'Arm a fault',
    json('FaultSpec', faultSpecSchema),
    json('Fault', answers.faultSchema),
    [],
    201,
  ),
  adminWithBody(
    'post',
    '/scenario',
    'loadScenario',
    'Load a bundled scenario by name, or one inline (resets first)',
    json('ScenarioRequest', scenarioRequestSchema),
    json('ScenarioLoaded', answers.scenarioLoadedSchema),
  ),
  {
    method: 'get',
    path: '/__admin/journal',
    id: 'getJournal',
    summary: 'Recent requests (agent traffic; admin calls are not journaled)',
    tag: 'admin',
    security: 'admin',
    query: journalQuery,
    ok: {
      status: 200,
      description: 'Journal entries, oldest first.',
      schema: json('Journal', answers.journalSchema),
    },
    errors: [...ADMIN, 'invalid_request'],
  },
  {
    method: 'get',
    path: '/__admin/journal/export',
    id: 'streamJournal',
    summary: 'Every journal entry, streamed as NDJSON (the entries up to X-Journal-Until, oldest first)',
    tag: 'admin',
    security: 'admin',
    query: journalExportQuery,
    ok: { status: 200, description: 'One JSON journal entry a line.', text: ['application/x-ndjson'] },
    errors: [...ADMIN, 'invalid_request'],
  },
  {
    method: 'get',
    path: '/__admin/export',
    id: 'exportJournal',
    summary: 'The journal as a HAR 1.2 file (headers and bodies as the journal keeps them, redacted)',
    tag: 'admin',
    security: 'admin',
    query: exportQuery,
    ok: { status: 200, description: 'A HAR 1.2 log.', schema: json('Har', answers.harSchema) },
    errors: [...ADMIN, 'invalid_request'],
  },
  {
    method: 'get',
    path: '/__admin/findings',
    id: 'getFindings',
    summary: "Spec rules the journaled answers broke, per rule with the exchanges (proxy mode: the target's)",
    tag: 'admin',
    security: 'admin',
    query: findingsQuery,
    ok: { status: 200, description: 'Findings per rule.', schema: json('Findings', answers.findingsSchema) },
    errors: [...ADMIN, 'invalid_request'],
  },
  {
    method: 'get',
    path: '/__admin/report',
    id: 'getClientReport',
    summary: "An agent's client behaviour report (the spec's client safety rules)",
    tag: 'admin',
    security: 'admin',
    query: reportQuery,
    ok: { status: 200, description: 'The report.', schema: json('ClientReport', answers.clientReportSchema) },
    errors: [...ADMIN, 'invalid_request', 'not_found'],
  },
);

/** Every operation the document can describe (tests send each one and check the answer against it). */
export const documentedOperations = (): readonly OperationDoc[] => [
  ...PUBLIC_OPERATIONS,
  ...ADMIN_OPERATIONS,
];

/** Errors the router answers for any path or method not documented here. */
const ROUTING_ERRORS: {
  name: string;
  code: ErrorCode;
  description: string;
  headers?: Record<string, unknown>;
}[] = [
  { name: 'NotFound', code: 'not_found', description: 'Any path not documented here.' },
  {
    name: 'MethodNotAllowed',
    code: 'method_not_allowed',
    description: 'A documented path with a method it does not answer; `Allow` lists those it does.',
    headers: { Allow: { description: 'The methods the path answers.', schema: { type: 'string' } } },
  },
  {
    name: 'RequestHeaderFieldsTooLarge',
    code: 'request_header_fields_too_large',
    description:
      "Any request whose header section is over 16 KiB (Node's HTTP parser); the connection closes.",
  },
  {
    name: 'RequestTimeout',
    code: 'request_timeout',
    description:
      'Any connection whose request headers do not arrive within server.headers_timeout_ms, or whose request does not within server.request_timeout_ms; the connection closes.',
  },
];

/**
 * The `reason` detail of the errors that carry one, named in their description: a client can tell why a
 * token was refused, or which limit a 429 is about.
 */
const REASONS: Partial<Record<ErrorCode, string>> = {
  invalid_identity_token: `\`reason\` is one of ${INVALID_TOKEN_REASONS.map((r) => `\`${r}\``).join(', ')}.`,
  rate_limited:
    '`reason` is `rate` (a rate-limit rule; `rule`, `retry_after_seconds`), `concurrency` (requests in flight per agent; `in_flight`, `limit`) or `connections` (the client address holds server.max_connections_per_client connections, all busy; `limit`).',
};

type Json = Record<string, unknown>;

/** JSON Schema 2020-12 of a zod schema, as an OpenAPI 3.1 Schema Object (no `$schema` of its own). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const REQUEST_ID = {
  description: 'The request id: yours when plain (up to 128 of A-Z a-z 0-9 . _ : -), else a fresh UUID.',
  schema: { type: 'string' },
};
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description:
      'draft-ietf-httpapi-ratelimit-headers: each rule that counted the request, `"name";r=remaining;t=seconds`.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'draft-ietf-httpapi-ratelimit-headers: each rule, `"name";q=quota;w=window seconds`.',
    schema: { type: 'string' },
  },
};

function errorResponses(errors: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(errors)) {
    const { status } = ERROR_CATALOGUE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Json = { 'X-Request-Id': REQUEST_ID };
    if (status === 401)
      headers['WWW-Authenticate'] = {
        description: 'The challenge RFC 9110 requires.',
        schema: { type: 'string' },
      };
    if (status === 429) {
      headers['Retry-After'] = {
        description:
          'Delta-seconds (default) or an HTTP-date on the gateway clock; truthful. Absent for the concurrency limit.',
        schema: { type: 'string' },
      };
      Object.assign(headers, RATE_LIMIT_HEADERS);
    }
    if (codes.some((c) => FAULTS.includes(c) && c !== 'internal_error'))
      headers['Retry-After'] = {
        description: 'When an injected fault sets one.',
        schema: { type: 'string' },
      };
    responses[String(status)] = {
      description: codes
        .map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].message}${REASONS[c] ? ` ${REASONS[c]}` : ''}`)
        .join(' '),
      headers,
      content: {
        'application/json': {
          schema: { allOf: [ref('Error'), { type: 'object', properties: { code: { enum: codes } } }] },
          examples: Object.fromEntries(
            codes.map((c) => [
              c,
              {
                value: {
                  code: c,
                  message: ERROR_CATALOGUE[c].message,
                  request_id: '6f1c0f7e-2b1d-4c55-9a57-3c1f3f1f2e11',
                },
              },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

function operationObject(op: OperationDoc, schemas: Json): Json {
  const parameters: Json[] = [];
  for (const match of op.path.matchAll(/\{(\w+)\}/g))
    parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
  if (op.query) {
    const shape = jsonSchema(op.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(shape.properties ?? {}))
      parameters.push({ name, in: 'query', required: shape.required?.includes(name) ?? false, schema });
  }
  for (const p of op.textQuery ?? [])
    parameters.push({
      name: p.name,
      in: 'query',
      required: p.required,
      description: p.description,
      schema: { type: 'string' },
    });
  if (op.idempotencyKey)
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Reference profile: a retry with the same key and body gets the stored answer (`Idempotent-Replayed: true`).',
      schema: { type: 'string', maxLength: 257 },
    });
  const okHeaders: Json = { 'X-Request-Id': REQUEST_ID };
  if (op.ok.rateLimited) Object.assign(okHeaders, RATE_LIMIT_HEADERS);
  let content: Json | undefined;
  if (op.ok.schema) {
    schemas[op.ok.schema.name] ??= jsonSchema(op.ok.schema.schema, 'output');
    content = { 'application/json': { schema: ref(op.ok.schema.name) } };
  } else if (op.ok.text) {
    content = Object.fromEntries(op.ok.text.map((type) => [type, { schema: { type: 'string' } }]));
  }
  const operation: Json = {
    operationId: op.id,
    summary: op.summary,
    ...(op.description && { description: op.description }),
    tags: [op.tag],
    security:
      op.security === 'none'
        ? []
        : op.security === 'agent'
          ? [{ AgentIdentity: [] }]
          : [{ AdminKey: [] }, { AdminBearer: [] }],
    ...(parameters.length > 0 && { parameters }),
    responses: {
      [String(op.ok.status)]: {
        description: op.ok.description,
        headers: okHeaders,
        ...(content && { content }),
      },
      ...errorResponses(op.errors),
    },
  };
  if (op.body) {
    schemas[op.body.name] ??= jsonSchema(op.body.schema, 'input');
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: ref(op.body.name) } },
    };
  }
  return operation;
}

/** What a gateway serves, and so what its document describes. */
export interface OpenApiOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8787` (default: that). */
  serverUrl?: string;
  /** Describe the simulated identity provider's endpoints (default true). */
  identityProvider?: boolean;
  /** Describe the admin API (default true). */
  admin?: boolean;
}

/**
 * The OpenAPI 3.1 document of the reference profile: the four endpoints of the spec, the simulated identity
 * provider and the admin API. Request bodies and query parameters come from the zod schemas that validate
 * them (JSON Schema 2020-12 by `z.toJSONSchema`, which OpenAPI 3.1 uses), so the document cannot drift
 * from what the gateway accepts; each operation lists the error codes it answers with, under their statuses.
 *
 * @example
 * const doc = createOpenApiDocument({ serverUrl: 'http://127.0.0.1:8787' });
 * writeFileSync('openapi.json', JSON.stringify(doc, null, 2));
 */
export function createOpenApiDocument(options: OpenApiOptions = {}): Json {
  const operations = [
    ...PUBLIC_OPERATIONS.filter((op) => options.identityProvider !== false || op.tag !== 'identity provider'),
    ...(options.admin === false ? [] : ADMIN_OPERATIONS),
  ];
  const schemas: Json = { Error: jsonSchema(answers.errorSchema, 'output') };
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    (paths[op.path] as Json)[op.method] = operationObject(op, schemas);
  }
  const tags = [
    { name: 'spec', description: 'The endpoints of the Agent Tool Gateway specification (section 4).' },
    ...(options.identityProvider === false
      ? []
      : [{ name: 'identity provider', description: 'The simulated identity provider (reference profile).' }]),
    ...(options.admin === false
      ? []
      : [
          {
            name: 'admin',
            description: 'The admin API: enabled by an admin key, sent as X-Admin-Key or a Bearer token.',
          },
        ]),
    {
      name: 'reference profile',
      description: 'Choices the reference gateway makes where the spec says "not shown".',
    },
  ];
  const securitySchemes: Json = {
    AgentIdentity: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Agent-Identity',
      description: 'An identity token (spec section 5).',
    },
  };
  if (options.admin !== false) {
    securitySchemes.AdminKey = {
      type: 'apiKey',
      in: 'header',
      name: 'X-Admin-Key',
      description: 'The admin key.',
    };
    securitySchemes.AdminBearer = {
      type: 'http',
      scheme: 'bearer',
      description: 'The admin key as a Bearer token.',
    };
  }
  const routing = Object.fromEntries(
    ROUTING_ERRORS.map(({ name, code, description, headers }) => {
      const [status, response] = Object.entries(errorResponses([code]))[0] as [string, Json];
      return [
        name,
        {
          ...response,
          description: `${description} ${response.description as string}`,
          headers: { ...(response.headers as Json), ...headers },
          'x-status': Number(status),
        },
      ];
    }),
  );
  return {
    openapi: '3.1.1',
    info: {
      title: 'Agent Tool Gateway: reference profile',
      version: VERSION,
      summary: 'The reference gateway of the Agent Tool Gateway harness',
      description:
        'The four endpoints of the Agent Tool Gateway specification with the reference profile\'s choices (bodies, fields, error codes), the simulated identity provider and the admin API. Every error is JSON `{ code, message, ..., request_id }`; the statuses and codes each operation answers with are listed under it. Any other path answers 404 `not_found`, any other method on a documented path 405 `method_not_allowed` with `Allow` (components.responses, with `x-status`). Other gateways may make other choices where the spec says "not shown": the conformance suite never requires these.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.serverUrl ?? 'http://127.0.0.1:8787', description: 'The gateway' }],
    tags,
    paths,
    components: { schemas, responses: routing, securitySchemes },
  };
}
