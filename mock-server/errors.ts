import { ERROR_CODES, ERROR_STATUSES, type ErrorCode } from '../vocabulary/error-codes.ts';
import { IDENTITY_HEADER } from '../vocabulary/identity-header.ts';

/**
 * What the reference gateway says for each error code of the spec vocabulary (vocabulary/error-codes.ts, which
 * declares the codes and their statuses once, spec section 7): the message, and for a 401 the challenge.
 *
 * Every error response is JSON `{ code, message, request_id, ...details }` with the code's status;
 * a 401 also carries the `WWW-Authenticate` challenge RFC 9110 section 11.6.1 requires.
 * The codes of spec section 7 come first; the rest belong to the reference profile (documented in the
 * README) and are never required of other gateways by the conformance suite.
 */
const ERROR_TEXTS = {
  // Spec section 7.
  missing_identity_token: {
    message: `The ${IDENTITY_HEADER} header is missing: obtain a token and send it.`,
    challenge: `AgentIdentity header="${IDENTITY_HEADER}"`,
  },
  invalid_identity_token: {
    message: 'The identity token was not accepted: obtain a fresh token and resend.',
    challenge: `AgentIdentity header="${IDENTITY_HEADER}", error="invalid_token"`,
  },
  access_denied: {
    message: 'Your tier or allowlist does not allow this tool: request early access or verification.',
  },
  rate_limited: { message: 'Rate limit exceeded: back off with jitter and honour Retry-After.' },
  // Reference profile: client mistakes.
  invalid_request: { message: 'The request is invalid.' },
  not_found: { message: 'No such endpoint.' },
  method_not_allowed: { message: 'This endpoint does not support the method.' },
  idempotency_key_in_use: {
    message: 'A request with this Idempotency-Key is still being processed.',
  },
  already_exists: { message: 'That already exists.' },
  request_timeout: {
    message: 'The request did not arrive in time: send its headers and body without stalling.',
  },
  payload_too_large: { message: 'The request body is too large.' },
  unsupported_media_type: {
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  idempotency_key_reused: {
    message: 'This Idempotency-Key was already used with a different request.',
  },
  request_header_fields_too_large: {
    message: 'The request header section is too large.',
  },
  // Reference profile: identity provider and admin API.
  invalid_api_key: {
    message: 'The API key is missing or unknown.',
    challenge: 'ApiKey field="api_key"',
  },
  agent_disabled: { message: 'This agent is disabled at the identity provider.' },
  admin_key_required: {
    message: 'The admin API needs the X-Admin-Key header.',
    challenge: 'AdminKey header="X-Admin-Key", Bearer realm="admin"',
  },
  admin_key_invalid: { message: 'The admin key is wrong.' },
  // Reference profile: server side.
  internal_error: { message: 'Internal error; it has been logged.' },
  upstream_error: { message: 'The tool backend answered with an error: retry with backoff.' },
  upstream_unavailable: {
    message: 'The tool backend is temporarily unavailable: retry with backoff.',
  },
  upstream_timeout: { message: 'The tool backend did not answer in time: retry with backoff.' },
  state_store_unavailable: {
    message: 'The shared state store (Redis) did not answer: retry with backoff.',
  },
  state_store_conflict: {
    message:
      'The shared state store holds another signing secret or config than this instance: it refuses rather than split; restart it.',
  },
  identity_provider_unavailable: {
    message: 'The identity provider could not be reached: retry with backoff.',
  },
} as const satisfies Record<ErrorCode, { message: string; challenge?: string }>;

/** Each code's status (from the spec vocabulary), message and challenge. */
export const ERROR_CATALOGUE = Object.fromEntries(
  ERROR_CODES.map((code) => [code, { status: ERROR_STATUSES[code], ...ERROR_TEXTS[code] }]),
) as { [C in ErrorCode]: { status: (typeof ERROR_STATUSES)[C] } & (typeof ERROR_TEXTS)[C] };

/** A stable snake_case error code; declared once, in the spec vocabulary. */
export type { ErrorCode };

/** Every code, for documentation and tests. */
export { ERROR_CODES };

/** Extra JSON fields an error carries next to `code` and `message`. */
type ErrorDetails = Record<string, unknown>;

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
