import { createBoundedMap } from '../bounded-map.ts';

/**
 * Remembers one value per token, for at most `max` tokens (oldest dropped first). Agents resend the same
 * token on every call; keying by its last 43 characters (the signature, in this IdP's tokens) with the
 * whole token compared on a hit is cheaper than hashing a 240-character header string per request.
 *
 * @example
 * const claims = createTokenMemo<Claims>();
 * claims.get(token) ?? claims.set(token, decode(token));
 */
export function createTokenMemo<V>(max = 65_536) {
  const entries = createBoundedMap<string, { token: string; value: V }>(max);
  const known = (token: string) => {
    const entry = entries.get(token.slice(-43));
    return entry?.token === token ? entry : undefined;
  };
  return {
    get: (token: string): V | undefined => known(token)?.value,
    /**
     * The string remembered for `token` (equal to it), or `token` itself: what a journal entry keeps holds
     * one copy of an agent's token, not one per request (each header is a new string of 240 characters).
     */
    shared: (token: string): string => known(token)?.token ?? token,
    set(token: string, value: V): V {
      entries.set(token.slice(-43), { token, value });
      return value;
    },
  };
}
