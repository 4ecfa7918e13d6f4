import { IDENTITY_HEADER } from '../../vocabulary/identity-header.ts';
import type { Exchange, SuiteRequest, SuiteResponse } from '../model/suite-request.ts';
import { applyTransform, type TokenValue } from '../model/token-value.ts';
import type { TokenSource } from '../tokens/token-source.ts';

/* The suite client's token handling (http-client.ts): the value a request's token stands for, the headers
 * that carry it (and their redacted copy for reports), and when a refused real token is worth another try. */

export type ClientTokens = {
  valid?: TokenSource;
  denied?: TokenSource;
  expired?: TokenSource;
  revoked?: TokenSource;
};

/** A token's value as sent: a literal as it is, a derived one from its source, with the redacted form. */
export async function materialiseToken(tokens: ClientTokens, token: TokenValue) {
  if (token.kind === 'literal') return { value: token.value };
  const source = tokens[token.from];
  if (!source) throw new Error(`no ${token.from} token was given`);
  const { value, resolved } = applyTransform(await source.current(), token.transform);
  return { value, redacted: { variable: source.variable, transform: resolved } };
}

/** The headers a request is sent with, their redacted copy, the token's value and how it was derived. */
export async function requestHeaders(tokens: ClientTokens, request: SuiteRequest) {
  const headers: [string, string][] = Object.entries(request.headers ?? {});
  let tokenTransform: Exchange['tokenTransform'];
  let redactedHeaders = headers;
  let sentValue: string | undefined;
  if (request.token) {
    const { value, redacted } = await materialiseToken(tokens, request.token);
    sentValue = value;
    const name = request.tokenHeader ?? IDENTITY_HEADER;
    // node:http sends a string's characters as latin1 bytes: UTF-8 text must be pre-encoded.
    headers.push([name, Buffer.from(value, 'utf8').toString('latin1')]);
    tokenTransform = redacted;
    redactedHeaders = [...headers.slice(0, -1), [name, redacted ? `<${redacted.variable}>` : value]];
  }
  return { headers, redactedHeaders, sentValue, tokenTransform };
}

/**
 * Whether a 401 invalid_identity_token refused a real token sent unaltered (not the expired or revoked one) that may be
 * tried again: refreshed once, or resent (twice at most, `resent` so far), unless the caller said not to.
 */
export function refusedRealToken(
  request: SuiteRequest,
  response: SuiteResponse,
  resent: number,
  noRefresh: boolean | undefined,
): boolean {
  const code = (response.json as { code?: unknown } | undefined)?.code;
  return (
    response.status === 401 &&
    code === 'invalid_identity_token' &&
    request.token?.kind === 'derived' &&
    request.token.transform.op === 'none' &&
    request.token.from !== 'expired' &&
    request.token.from !== 'revoked' &&
    resent < 2 &&
    !noRefresh
  );
}
