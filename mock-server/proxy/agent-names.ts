import type { ClientRequest } from 'node:http';
import { createBoundedMap } from '../bounded-map.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { ANALYSED_BYTES, agentIdOf } from './exchange-notes.ts';
import { collector } from './wire.ts';

/**
 * Which agent a token is, as the target gateway names it. `whoami(token)` starts the target's whoami for
 * the token (not yet ended); its answer is asked once per token and remembered (bounded; the token lives only
 * here, in memory, as the key). `byConnection` remembers, per connection id, the agent whose accepted token
 * it last carried (bounded).
 */
export function createAgentNames(whoami: (token: string) => ClientRequest, timeoutMs: number) {
  const byToken = createBoundedMap<string, Promise<string>>(10_000);
  const byConnection = createBoundedMap<number, string>(16_384);

  /**
   * The agent id the target's whoami gives for the token. A token it refuses (expired, revoked) is the
   * agent's that last used this connection with a token the target accepted: an HTTP/1.1 connection is one
   * client's, and that is how the report sees an agent resend its expired token. Else a stable fingerprint
   * of the token (`tok_...`).
   */
  const askWhoami = (token: string, connection: number | undefined): Promise<string> =>
    new Promise((resolve) => {
      const fallback = (connection !== undefined && byConnection.get(connection)) || tokenFingerprint(token);
      const req = whoami(token);
      req.setTimeout(timeoutMs, () => req.destroy());
      req.on('error', () => resolve(fallback));
      req.on('response', (res) => {
        const body = collector(ANALYSED_BYTES);
        res.on('data', (chunk: Buffer) => body.add(chunk));
        res.on('error', () => resolve(fallback));
        res.on('end', () =>
          resolve(
            res.statusCode && res.statusCode < 300 && body.whole
              ? (agentIdOf(body.bytes().toString('utf8')) ?? fallback)
              : fallback,
          ),
        );
      });
      req.end();
    });

  return {
    byToken,
    byConnection,
    /** The agent of a token, asked of the target the first time it is seen. */
    of(token: string, connection: number | undefined): Promise<string> {
      let known = byToken.get(token);
      if (!known) {
        known = askWhoami(token, connection);
        byToken.set(token, known);
      }
      return known;
    },
  };
}
