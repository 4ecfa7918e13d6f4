import { z } from 'zod';
import { GatewayError } from '../errors.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import { type IdentityProvider, INVALID_TOKEN_REASONS, type VerifyResult } from './identity-provider.ts';

/**
 * How the gateway checks an identity token. The default asks the in-process identity provider; a remote
 * verifier asks an identity provider over HTTP, so the gateway can sit in front of another IdP.
 */
export interface IdentityVerifier {
  verify(token: string): MaybePromise<VerifyResult>;
  /** Base URL of the identity provider whose `idp/auth.md` a 401 points to; default: this gateway's. */
  readonly idpBaseUrl?: string;
}

/** Verifies with the identity provider in this process. */
export function createLocalVerifier(idp: IdentityProvider): IdentityVerifier {
  return { verify: (token) => idp.verify(token) };
}

/** The verify endpoint's answer (`POST /idp/verify`), shared by the endpoint and the remote verifier. */
export const verifyResponseSchema = z.union([
  z.object({
    valid: z.literal(true),
    identity: z.object({
      agent_id: z.string(),
      name: z.string(),
      tier: z.string(),
      allowlist: z.array(z.string().max(64)),
      token_id: z.string(),
      issued_at: z.number(),
      expires_at: z.number(),
    }),
  }),
  z.object({
    valid: z.literal(false),
    reason: z.enum(INVALID_TOKEN_REASONS),
    agent_id: z.string().optional(),
  }),
]);
type VerifyResponse = z.infer<typeof verifyResponseSchema>;

/** Serialises a verify result for the wire. */
export function toVerifyResponse(result: VerifyResult): VerifyResponse {
  if (!result.ok)
    return { valid: false, reason: result.reason, ...(result.agentId ? { agent_id: result.agentId } : {}) };
  const { identity: i } = result;
  return {
    valid: true,
    identity: {
      agent_id: i.agentId,
      name: i.name,
      tier: i.tier,
      allowlist: [...i.allowlist],
      token_id: i.tokenId,
      issued_at: i.issuedAt,
      expires_at: i.expiresAt,
    },
  };
}

/**
 * Verifies by calling `POST {idpUrl}/idp/verify` (a path in `idpUrl` is kept). An unreachable or misbehaving IdP is a server-side
 * failure (503 identity_provider_unavailable), never a 401 blamed on the caller.
 *
 * @example
 * createGateway({ verifier: createRemoteVerifier('http://127.0.0.1:9000') });
 */
export function createRemoteVerifier(
  idpUrl: string,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): IdentityVerifier {
  // Relative to the URL as a directory, so a path prefix is kept: http://h/auth -> http://h/auth/idp/verify.
  const idpBaseUrl = new URL(idpUrl.replace(/\/*$/, '/')).href;
  const endpoint = new URL('idp/verify', idpBaseUrl).href;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  const unavailable = (why: string) =>
    new GatewayError('identity_provider_unavailable', {
      message: `The identity provider at ${endpoint} could not verify the token (${why}): retry with backoff.`,
    });

  return {
    idpBaseUrl,
    async verify(token) {
      let response: Response;
      try {
        response = await doFetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw unavailable(error instanceof Error ? error.message : String(error));
      }
      if (!response.ok) {
        // Release the connection now rather than at garbage collection.
        await response.body?.cancel().catch(() => undefined);
        throw unavailable(`HTTP ${response.status}`);
      }
      const parsed = verifyResponseSchema.safeParse(await response.json().catch(() => undefined));
      if (!parsed.success) throw unavailable('unexpected response body');
      const body = parsed.data;
      if (!body.valid) return { ok: false, reason: body.reason, agentId: body.agent_id };
      const i = body.identity;
      return {
        ok: true,
        identity: {
          agentId: i.agent_id,
          name: i.name,
          tier: i.tier,
          allowlist: i.allowlist,
          tokenId: i.token_id,
          issuedAt: i.issued_at,
          expiresAt: i.expires_at,
        },
      };
    },
  };
}
