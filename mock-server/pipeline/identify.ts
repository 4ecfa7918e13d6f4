import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER, IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { GatewayError } from '../errors.ts';
import type { CallContext } from '../http/context.ts';
import type { Identity, InvalidTokenReason, VerifyResult } from '../identity/identity-provider.ts';
import { sharedToken, tokenFingerprint } from '../identity/token-fingerprint.ts';
import type { IdentityVerifier } from '../identity/verifier.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import type { StatePort } from '../store/state-port.ts';

/** Where a refused token's answer sends the caller: the verifier's identity provider, if not this gateway's. */
type VerifierLink = Pick<IdentityVerifier, 'idpBaseUrl'>;

/** The identity header of spec section 5 (declared in the spec vocabulary). */
export { IDENTITY_HEADER };

// Agents resend the same token many times: its fingerprint is remembered (bounded; many agents at once fit).
/** The token a request carries in the identity header, trimmed; undefined when absent or blank. */
export const tokenOf = (ctx: CallContext): string | undefined => {
  if (ctx.token === undefined) {
    const token = ctx.request.header(IDENTITY_HEADER_KEY)?.trim();
    ctx.token = token ? sharedToken(token) : null;
  }
  return ctx.token ?? undefined;
};

/**
 * Where a caller learns how to get a token: the identity provider's instruction page, pre-filled. The
 * provider is this gateway's own `/idp` unless the verifier names another (`--idp-url`).
 */
export function instructionPageUrl(origin: string, idpBaseUrl?: string): string {
  const params = new URLSearchParams({
    app: 'your-agent',
    endpoint: `${origin}${SPEC_ENDPOINTS.whoami.path}`,
    header: IDENTITY_HEADER,
  });
  return `${new URL('idp/auth.md', idpBaseUrl ?? `${origin}/`).href}?${params}`;
}

/** What the identify stage uses: the verifier, and the state port's refusal (a shared store in conflict). */
export interface IdentifyDeps {
  readonly verifier: IdentityVerifier;
  readonly state: Pick<StatePort, 'refusal'>;
}

/**
 * The identify stage (spec section 5.3): no token, or an empty one, is 401 missing_identity_token; a token
 * the verifier refuses is 401 invalid_identity_token with the reason and where to get a fresh one.
 * The journal note gets the token's fingerprint (never the token) and, when known, the agent. Answers
 * without a promise when the verifier does (the in-process one), so the hot path waits no tick.
 */
export function identify(deps: IdentifyDeps, ctx: CallContext): MaybePromise<Identity> {
  const token = tokenOf(ctx);
  const { verifier } = deps;
  if (!token) {
    throw new GatewayError('missing_identity_token', {
      message: `The ${IDENTITY_HEADER} header is missing: obtain an identity token and send it in that header.`,
      details: {
        header: IDENTITY_HEADER,
        token_instructions: instructionPageUrl(ctx.request.origin, verifier.idpBaseUrl),
      },
    });
  }
  ctx.note.token = tokenFingerprint(token);
  // An instance whose shared store holds another signing secret judges no signature (a 401 bad_signature
  // for a token the other instances accept would be the split brain the refusal exists to prevent).
  const refusal = deps.state.refusal();
  if (refusal) throw refusal;
  return andThen(verifier.verify(token), (result) => accepted(ctx, result, verifier));
}

/** The identity of an accepted token; a refused one is 401 invalid_identity_token with the reason. */
function accepted(ctx: CallContext, result: VerifyResult, verifier: VerifierLink): Identity {
  if (result.ok) {
    ctx.note.agent = result.identity.agentId;
    return result.identity;
  }
  throw refusedToken(ctx, result.reason, result.agentId, verifier);
}

/** The 401 invalid_identity_token of a refused token, naming the reason and where to get a fresh one. */
export function refusedToken(
  ctx: CallContext,
  reason: InvalidTokenReason,
  agentId: string | undefined,
  verifier: VerifierLink,
): GatewayError {
  ctx.note.agent = agentId;
  return new GatewayError('invalid_identity_token', {
    message: `The identity token was not accepted (${reason.replace(/_/g, ' ')}): obtain a fresh token and resend; do not retry this one.`,
    details: {
      reason,
      token_instructions: instructionPageUrl(ctx.request.origin, verifier.idpBaseUrl),
    },
  });
}
