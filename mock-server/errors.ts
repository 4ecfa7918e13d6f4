/**
 * The one closed set of error codes the reference gateway can answer with.
 *
 * Every error response is JSON `{ code, message, request_id, ...details }` with the status listed here;
 * a 401 also carries the `WWW-Authenticate` challenge RFC 9110 section 11.6.1 requires.
 * The codes of spec section 7 come first; the rest belong to the reference profile (documented in the
 * README) and are never required of other gateways by the conformance suite.
 */
export const ERROR_CATALOGUE = {
  // Spec section 7.
  missing_identity_token: {
    status: 401,
    message: 'The X-Agent-Identity header is missing: obtain a token and send it.',
    challenge: 'AgentIdentity header="X-Agent-Identity"',
  },
  invalid_identity_token: {
    status: 401,
    message: 'The identity token was not accepted: obtain a fresh token and resend.',
    challenge: 'AgentIdentity header="X-Agent-Identity", error="invalid_token"',
  },
  access_denied: {
    status: 403,
    message: 'Your tier or allowlist does not allow this tool: request early access or verification.',
  },
  rate_limited: { status: 429, message: 'Rate limit exceeded: back off with jitter and honour Retry-After.' },
  // Reference profile: client mistakes.
  invalid_request: { status: 400, message: 'The request is invalid.' },
  not_found: { status: 404, message: 'No such endpoint.' },
  method_not_allowed: { status: 405, message: 'This endpoint does not support the method.' },
  idempotency_key_in_use: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed.',
  },
  already_exists: { status: 409, message: 'That already exists.' },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive in time: send its headers and body without stalling.',
  },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request.',
  },
  request_header_fields_too_large: {
    status: 431,
    message: 'The request header section is too large.',
  },
  // Reference profile: identity provider and admin API.
  invalid_api_key: {
    status: 401,
    message: 'The API key is missing or unknown.',
    challenge: 'ApiKey field="api_key"',
  },
  agent_disabled: { status: 403, message: 'This agent is disabled at the identity provider.' },
  admin_key_required: {
    status: 401,
    message: 'The admin API needs the X-Admin-Key header.',
    challenge: 'AdminKey header="X-Admin-Key", Bearer realm="admin"',
  },
  admin_key_invalid: { status: 403, message: 'The admin key is wrong.' },
  // Reference profile: server side.
  internal_error: { status: 500, message: 'Internal error; it has been logged.' },
  upstream_error: { status: 502, message: 'The tool backend answered with an error: retry with backoff.' },
  upstream_unavailable: {
    status: 503,
    message: 'The tool backend is temporarily unavailable: retry with backoff.',
  },
  upstream_timeout: { status: 504, message: 'The tool backend did not answer in time: retry with backoff.' },
  state_store_unavailable: {
    status: 503,
    message: 'The shared state store (Redis) did not answer: retry with backoff.',
  },
  state_store_conflict: {
    status: 503,
    message:
      'The shared state store holds another signing secret or config than this instance: it refuses rather than split; restart it.',
  },
  identity_provider_unavailable: {
    status: 503,
    message: 'The identity provider could not be reached: retry with backoff.',
  },
} as const satisfies Record<string, { status: number; message: string; challenge?: string }>;

/** A stable snake_case error code; the union is derived from the catalogue above. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Every code in the catalogue, for documentation and tests. */
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** Extra JSON fields an error carries next to `code` and `message`. */
export type ErrorDetails = Record<string, unknown>;

/**
 * The one HTTP error type of the gateway.
 *
 * @example
 * throw new GatewayError('invalid_request', { message: 'query: must be a non-empty string', details: { field: 'query' } });
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: ErrorDetails; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERROR_CATALOGUE[code].message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.details = options.details ?? {};
    const entry: { status: number; challenge?: string } = ERROR_CATALOGUE[code];
    this.headers = entry.challenge
      ? { 'www-authenticate': entry.challenge, ...options.headers }
      : (options.headers ?? {});
  }

  /** The JSON body, without transport concerns. */
  toJSON(requestId?: string): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details, request_id: requestId };
  }
}
