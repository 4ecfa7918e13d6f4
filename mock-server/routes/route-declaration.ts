import type { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import type { RouteBinder } from './router.ts';

/** The methods the gateway's routes use (`GET` answers `HEAD` too). */
type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Who may call a route: no credential, an agent's identity token, or the admin key. */
type RouteSecurity = 'agent' | 'admin' | 'none';

/**
 * Which part of the gateway a route belongs to; the core serves `identity provider` only when it verifies
 * tokens itself and `admin` and `dashboard` only with an admin key.
 */
type RouteGroup = 'spec' | 'identity provider' | 'admin' | 'dashboard' | 'reference profile';

/** A schema with the name its OpenAPI component takes. */
export interface NamedSchema {
  name: string;
  schema: z.ZodType;
}

/**
 * One route of the gateway, declared once: the router, the OpenAPI document, the admin index and the
 * public endpoints list are all read from these (see `route-table.ts`). The handler is bound to it by `id`
 * where the handler's state lives (`routes/*-routes.ts`), as `@hono/zod-openapi` binds one to a
 * `createRoute` declaration.
 */
export interface RouteDeclaration {
  method: RouteMethod;
  /** The path, `:name` standing for one segment (the router's syntax; the document writes `{name}`). */
  path: string;
  /** Stable id: the OpenAPI `operationId` and the key its handler is bound under. */
  id: string;
  summary: string;
  description?: string;
  group: RouteGroup;
  security: RouteSecurity;
  /** The schema that validates the request body (the document shows its input side). */
  body?: NamedSchema;
  /** The schema that validates the query string, one parameter per field. */
  query?: z.ZodObject;
  /** Text query parameters without a schema of their own (the instruction page's). */
  textQuery?: { name: string; required: boolean; description: string }[];
  /** The success answer. */
  ok: {
    status: number;
    description: string;
    /** Named component schema of a JSON answer, or a text answer's media types. */
    schema?: NamedSchema;
    text?: string[];
    rateLimited?: boolean;
  };
  /** Every error code this route answers with (beyond 405 and 404 for other paths and methods). */
  errors: readonly ErrorCode[];
  idempotencyKey?: boolean;
  /** A write-like operation (spec §7): `x-write-like: true` in the OpenAPI document. */
  writeLike?: boolean;
  /**
   * Left out of the OpenAPI document, with the reason (the dashboard's page and files: a browser's, not an
   * API). `route-table.test.ts` holds the list of routes allowed to be left out.
   */
  undocumented?: string;
  /** Left out of the admin index (the dashboard's files, which the page loads itself). */
  unlisted?: boolean;
}

export const json = (name: string, schema: z.ZodType): NamedSchema => ({ name, schema });

/** The identity stage's refusals. */
export const AGENT_AUTH: ErrorCode[] = [
  'missing_identity_token',
  'invalid_identity_token',
  'identity_provider_unavailable',
];
/** The body stage's refusals. request_timeout: a body that stalls past server.request_timeout_ms. */
export const BODY: ErrorCode[] = [
  'invalid_request',
  'payload_too_large',
  'unsupported_media_type',
  'request_timeout',
];
/** What an injected fault answers. */
export const FAULTS: ErrorCode[] = [
  'internal_error',
  'upstream_error',
  'upstream_unavailable',
  'upstream_timeout',
];
/** Only with a shared store (`--store redis://...`) that does not answer. */
export const STORE: ErrorCode[] = ['state_store_unavailable', 'state_store_conflict'];
/** Every admin route's: the key, and the shared store. */
export const ADMIN: ErrorCode[] = ['admin_key_required', 'admin_key_invalid', 'internal_error', ...STORE];
/** A tool call's, stage by stage. */
export const TOOL_ERRORS: ErrorCode[] = [
  ...AGENT_AUTH,
  'access_denied',
  ...BODY,
  'rate_limited',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  ...FAULTS,
  ...STORE,
];

/** What a registration function binds its handlers through (`routerFromTable`). */
export type Routes = RouteBinder<RouteDeclaration>;
