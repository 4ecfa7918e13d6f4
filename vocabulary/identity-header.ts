/**
 * Spec section 5 rule 2: the caller sends its identity token in the request header
 * `X-Agent-Identity: <TOKEN>`. Header names are case-insensitive (RFC 9110 section 5.1), so lookups use
 * the lower-case form.
 */

/** The identity header, as the spec spells it. */
export const IDENTITY_HEADER = 'X-Agent-Identity';

/** The identity header in lower case, for header lookups (node:http and fetch lower-case names). */
export const IDENTITY_HEADER_KEY = 'x-agent-identity';
