/**
 * Spec section 7 (Errors, with sections 3 and 5): error responses are JSON with the HTTP status and a
 * stable string `code`. The four codes of the spec come first; the others are the reference profile's
 * (never required of other gateways by the conformance suite). The gateway's messages live beside its
 * error class (mock-server/errors.ts), which takes its codes and statuses from here.
 */

/** The codes the spec names (section 7's table), with their statuses. */
export const SPEC_ERROR_STATUSES = {
  missing_identity_token: 401,
  invalid_identity_token: 401,
  access_denied: 403,
  rate_limited: 429,
} as const;

/** Every code the reference gateway answers with, with its status; the spec's first. */
export const ERROR_STATUSES = {
  ...SPEC_ERROR_STATUSES,
  // Reference profile: client mistakes.
  invalid_request: 400,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  already_exists: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  request_header_fields_too_large: 431,
  // Reference profile: identity provider and admin API.
  invalid_api_key: 401,
  agent_disabled: 403,
  admin_key_required: 401,
  admin_key_invalid: 403,
  // Reference profile: server side.
  internal_error: 500,
  upstream_error: 502,
  upstream_unavailable: 503,
  upstream_timeout: 504,
  state_store_unavailable: 503,
  state_store_conflict: 503,
  identity_provider_unavailable: 503,
} as const;

/** One of the spec's four codes. */
export type SpecErrorCode = keyof typeof SPEC_ERROR_STATUSES;

/** A stable snake_case error code of the reference gateway. */
export type ErrorCode = keyof typeof ERROR_STATUSES;

/** Every code, the spec's first. */
export const ERROR_CODES = Object.keys(ERROR_STATUSES) as ErrorCode[];

/** The spec's four codes. */
export const SPEC_ERROR_CODES = Object.keys(SPEC_ERROR_STATUSES) as SpecErrorCode[];
