import type { ErrorCode } from '../errors.ts';
import * as answers from '../routes/answer-schemas.ts';
import type { RouteDeclaration } from '../routes/route-declaration.ts';
import { ROUTES, type ServedParts, servedRoutes } from '../routes/route-table.ts';
import { errorResponses, type Json, jsonSchema, openApiPath, operationObject } from './operation.ts';

/** The version of the package (and of the reference profile it documents). */
const VERSION = '0.1.0';

/**
 * Every route the document can describe, from the route table (tests send each one and check the answer
 * against it). The dashboard's page and files are left out (`undocumented`).
 */
export const documentedOperations = (): readonly RouteDeclaration[] =>
  ROUTES.filter((route) => route.undocumented === undefined);

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

/** What a gateway serves, and so what its document describes. */
export interface OpenApiOptions extends ServedParts {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8787` (default: that). */
  serverUrl?: string;
  /** Describe the simulated identity provider's endpoints (default true). */
  identityProvider?: boolean;
  /** Describe the admin API (default true). */
  admin?: boolean;
}

/**
 * The OpenAPI 3.1 document of the reference profile: the four endpoints of the spec, the simulated identity
 * provider and the admin API, each operation derived from its route in the route table. Request bodies and query parameters come from the zod schemas that validate
 * them (JSON Schema 2020-12 by `z.toJSONSchema`, which OpenAPI 3.1 uses), so the document cannot drift
 * from what the gateway accepts; each operation lists the error codes it answers with, under their statuses.
 *
 * @example
 * const doc = createOpenApiDocument({ serverUrl: 'http://127.0.0.1:8787' });
 * writeFileSync('openapi.json', JSON.stringify(doc, null, 2));
 */
export function createOpenApiDocument(options: OpenApiOptions = {}): Json {
  const operations = servedRoutes(options).filter((route) => route.undocumented === undefined);
  const schemas: Json = { Error: jsonSchema(answers.errorSchema, 'output') };
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    paths[path] ??= {};
    (paths[path] as Json)[op.method.toLowerCase()] = operationObject(op, schemas);
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
