import { GatewayError } from '../errors.ts';
import type { IdempotencyOutcome, StoredResponse } from '../idempotency.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * Claims a key atomically: a live entry with another fingerprint is `reused` (422), one still in progress
 * `in_use` (409), a finished one `replay`; otherwise the key is taken as in progress. Expiry is on the
 * gateway clock (field x); an in-progress claim also expires in real time after the lease, so a key held
 * by an instance that died is freed.
 * The entry's key is made here under the store's epoch, so a reset through any instance forgets every key
 * at once (as in memory); the key is returned for the request to settle.
 * KEYS: the epoch. ARGV: fingerprint, now, ttl ms, lease ms, key prefix, key suffix.
 */
const BEGIN_SCRIPT = `
local key = ARGV[5] .. (redis.call('GET', KEYS[1]) or '0') .. ':' .. ARGV[6]
local e = redis.call('HMGET', key, 's', 'f', 'x', 'r')
if e[1] and tonumber(e[3]) > tonumber(ARGV[2]) then
  if e[2] ~= ARGV[1] then return {'reused'} end
  if e[1] == 'p' then return {'in_use'} end
  return {'replay', e[4]}
end
redis.call('DEL', key)
redis.call('HSET', key, 's', 'p', 'f', ARGV[1], 'x', string.format('%.0f', tonumber(ARGV[2]) + tonumber(ARGV[3])))
redis.call('PEXPIRE', key, ARGV[4])
return {'new', key}
`;

/**
 * Idempotency keys on Redis (the same rules as the in-memory store, `idempotency.ts`), so a retry that
 * lands on another instance is replayed, refused 409 while the first still runs, or 422 when reused.
 */
export function createRedisIdempotency(
  connection: RedisConnection,
  options: { ttlSeconds: number; leaseMs: number },
) {
  const { redis } = connection;
  redis.defineCommand('agwIdemBegin', { numberOfKeys: 1, lua: BEGIN_SCRIPT });
  const begin = (redis as unknown as { agwIdemBegin(...args: (string | number)[]): Promise<string[]> })
    .agwIdemBegin;
  let ttlMs = options.ttlSeconds * 1000;
  const epochKey = connection.key('epoch');
  const prefix = connection.key('idem:');
  const suffixOf = (agentId: string, key: string) => `${agentId.length}:${agentId}:${key}`;

  return {
    async begin(agentId: string, key: string, fingerprint: string, now: number): Promise<IdempotencyOutcome> {
      let reply: string[];
      try {
        reply = await connection.bounded(
          begin.call(
            redis,
            epochKey,
            fingerprint,
            Math.floor(now),
            ttlMs,
            options.leaseMs,
            prefix,
            suffixOf(agentId, key),
          ),
        );
      } catch (error) {
        throw connection.unavailable(error);
      }
      if (reply[0] === 'reused')
        throw new GatewayError('idempotency_key_reused', {
          message:
            'This Idempotency-Key was already used with a different request: use a new key for a new request.',
          details: { idempotency_key: key },
        });
      if (reply[0] === 'in_use')
        throw new GatewayError('idempotency_key_in_use', {
          message:
            'A request with this Idempotency-Key is still being processed: retry once it has finished.',
          details: { idempotency_key: key },
        });
      if (reply[0] === 'replay') return { kind: 'replay', response: JSON.parse(reply[1] as string) };
      return { kind: 'new', storeKey: reply[1] };
    },

    /** Stores a successful response (kept for the ttl on the gateway clock), or frees the key after a failure. */
    finish(
      _agentId: string,
      _key: string,
      _fingerprint: string,
      now: number,
      response: StoredResponse | undefined,
      storeKey?: string,
    ) {
      // The key the claim was made under (the epoch may have moved since).
      if (storeKey === undefined) return;
      const entry = storeKey;
      const done = response
        ? redis
            .multi()
            .hset(entry, 's', 'd', 'x', String(Math.floor(now) + ttlMs), 'r', JSON.stringify(response))
            // Real-time cleanup a day after the gateway-clock expiry (a frozen clock keeps keys that long).
            .pexpire(entry, ttlMs + 86_400_000)
            .exec()
        : redis.del(entry);
      done.catch((error) => connection.options.log(`idempotency key not settled: ${String(error)}`));
    },

    configure(next: { ttlSeconds: number }) {
      ttlMs = next.ttlSeconds * 1000;
    },
  };
}

export type RedisIdempotency = ReturnType<typeof createRedisIdempotency>;
