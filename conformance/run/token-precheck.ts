import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { backoffMs } from '../client/client-pacing.ts';
import type { SuiteClient } from '../client/http-client.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { TokenValue } from '../model/token-value.ts';
import type { TokenSource } from '../tokens/token-source.ts';

/**
 * Whoami requests the pre-check sends before it calls a token refused: one more than it takes to pass a
 * refusing instance behind a round-robin balancer of two, three or four.
 */
export const PRECHECK_ATTEMPTS = 4;

/**
 * Before the checks: whoami must accept the token (spec §4 rule 2). A token refused on every one of
 * PRECHECK_ATTEMPTS whoami requests (with backoff between them) is the run's input that is wrong: exit 2,
 * saying so, before every check blames the gateway for it. A token refused once and accepted on another
 * attempt is a valid token: the run goes on, and auth.valid-token-accepted judges the refusal (the client's
 * token ledger keeps it), as evidence against the gateway, never against the token.
 */
export async function precheckToken(
  client: SuiteClient,
  token: TokenValue,
  source: TokenSource,
): Promise<void> {
  const codes: string[] = [];
  for (let attempt = 1; attempt <= PRECHECK_ATTEMPTS; attempt++) {
    const whoami = await client.send({
      method: SPEC_ENDPOINTS.whoami.method,
      path: SPEC_ENDPOINTS.whoami.path,
      token,
    });
    if (whoami.response.status !== 401) return;
    const code = (whoami.response.json as { code?: unknown } | undefined)?.code;
    codes.push(typeof code === 'string' ? `401 ${code}` : '401');
    if (attempt < PRECHECK_ATTEMPTS) await client.pause(backoffMs(attempt), '');
  }
  const answers = [...new Set(codes)].join(', ');
  throw new CannotRunError(
    `the gateway does not accept the token in ${source.variable}: ${SPEC_ENDPOINTS.whoami.method} ${SPEC_ENDPOINTS.whoami.path} answered ${answers} to each of ${PRECHECK_ATTEMPTS} requests. Give a current, valid token (or a --token-command that mints one). If the same token is accepted elsewhere (another instance, another client), the gateway refuses valid tokens: that is its fault (spec §4 rule 2), and the suite cannot judge its other rules until whoami accepts the token at least once.`,
  );
}
