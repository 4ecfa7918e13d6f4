import { GatewayError } from '../errors.ts';
import { fingerprint } from '../hash.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { IdentityVerifier } from '../identity/verifier.ts';
import type { JournalNote } from '../journal.ts';

/** The identity header of spec section 5. `Headers.get` matches names case-insensitively. */
export const IDENTITY_HEADER = 'X-Agent-Identity';

/** Where a caller learns how to get a token: the identity provider's instruction page, pre-filled. */
export function instructionPageUrl(requestUrl: string): string {
  const { origin } = new URL(requestUrl);
  const params = new URLSearchParams({
    app: 'your-agent',
    endpoint: `${origin}/v1/whoami`,
    header: IDENTITY_HEADER,
  });
  return `${origin}/idp/auth.md?${params}`;
}

/**
 * The identity stage (spec section 5.3): no token, or an empty one, is 401 missing_identity_token; a token
 * the verifier refuses is 401 invalid_identity_token with the reason and where to get a fresh one.
 * The journal note gets the token's fingerprint (never the token) and, when known, the agent.
 */
export async function authenticate(
  request: Request,
  verifier: IdentityVerifier,
  note: JournalNote = {},
): Promise<Identity> {
  const token = request.headers.get(IDENTITY_HEADER)?.trim();
  if (!token) {
    throw new GatewayError('missing_identity_token', {
      message: `The ${IDENTITY_HEADER} header is missing: obtain an identity token and send it in that header.`,
      details: { header: IDENTITY_HEADER, token_instructions: instructionPageUrl(request.url) },
    });
  }
  note.token = fingerprint('tok', token);
  const pending = verifier.verify(token);
  // The in-process verifier answers synchronously; only a remote one needs the await (and its tick).
  const result = pending instanceof Promise ? await pending : pending;
  if (result.ok) {
    note.agent = result.identity.agentId;
    return result.identity;
  }
  note.agent = result.agentId;
  throw new GatewayError('invalid_identity_token', {
    message: `The identity token was not accepted (${result.reason.replace(/_/g, ' ')}): obtain a fresh token and resend; do not retry this one.`,
    details: { reason: result.reason, token_instructions: instructionPageUrl(request.url) },
  });
}
