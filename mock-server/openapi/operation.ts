import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
import { INVALID_TOKEN_REASONS } from '../identity/identity-provider.ts';
import { FAULTS, type RouteDeclaration } from '../routes/route-declaration.ts';

/**
 * The `reason` detail of the errors that carry one, named in their description: a client can tell why a
 * token was refused, or which limit a 429 is about.
 */
const REASONS: Partial<Record<ErrorCode, string>> = {
  invalid_identity_token: `\`reason\` is one of ${INVALID_TOKEN_REASONS.map((r) => `\`${r}\``).join(', ')}.`,
  rate_limited:
    '`reason` is `rate` (a rate-limit rule; `rule`, `retry_after_seconds`), `concurrency` (requests in flight per agent; `in_flight`, `limit`) or `connections` (the client address holds server.max_connections_per_client connections, all busy; `limit`).',
};

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** JSON Schema 2020-12 of a zod schema, as an OpenAPI 3.1 Schema Object (no `$schema` of its own). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
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

/** The error answers of a list of codes, grouped under their statuses, each code with an example. */
export function errorResponses(errors: readonly ErrorCode[]): Json {
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

/** A route's path as OpenAPI writes it: `/__admin/agents/{id}` for the router's `/__admin/agents/:id`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** The Operation Object of a route; the schemas it names are added to `schemas` (each once). */
export function operationObject(op: RouteDeclaration, schemas: Json): Json {
  const parameters: Json[] = [];
  for (const match of openApiPath(op.path).matchAll(/\{(\w+)\}/g))
    parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
  if (op.query) {
    const shape = jsonSchema(op.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(shape.properties ?? {})) {
      // A field's description (an option schema's) describes the parameter.
      const { description } = schema as { description?: string };
      const required = shape.required?.includes(name) ?? false;
      parameters.push({ name, in: 'query', required, ...(description && { description }), schema });
    }
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
    ...(op.writeLike && { 'x-write-like': true }),
    ...(op.description && { description: op.description }),
    tags: [op.group],
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
