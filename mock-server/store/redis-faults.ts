import type { Fault } from '../scenarios/faults.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * Counts a matching request against an armed fault for every instance at once: `every` and `count` hold
 * across the fleet (a fault armed with count 1 strikes once, whichever instance the request reaches).
 * KEYS: the fault's counters. ARGV: every, count (-1: forever). Returns {struck, seen, fired}.
 */
const STRIKE_SCRIPT = `
local seen = redis.call('HINCRBY', KEYS[1], 'seen', 1)
local fired = tonumber(redis.call('HGET', KEYS[1], 'fired') or '0')
redis.call('PEXPIRE', KEYS[1], 86400000)
if (seen - 1) % tonumber(ARGV[1]) ~= 0 then return {0, seen, fired} end
local count = tonumber(ARGV[2])
if count >= 0 and fired >= count then return {0, seen, fired} end
fired = redis.call('HINCRBY', KEYS[1], 'fired', 1)
return {1, seen, fired}
`;

/** Fault strikes counted in the store (the list of armed faults travels with the admin snapshot). */
export function createRedisFaults(connection: RedisConnection) {
  const { redis } = connection;
  redis.defineCommand('agwStrike', { numberOfKeys: 1, lua: STRIKE_SCRIPT });
  const strike = (redis as unknown as { agwStrike(...args: (string | number)[]): Promise<number[]> })
    .agwStrike;
  return {
    /**
     * Counts the request against each matching fault in order until one strikes (as `faults.strike` does in
     * memory); updates the local copies' counts. `epoch` keeps a reset's new fault-1 apart from the old one.
     */
    async strike(candidates: readonly Fault[], epoch: number): Promise<Fault | undefined> {
      for (const fault of candidates) {
        const [struck, seen, fired] = await connection.bounded(
          strike.call(redis, connection.key(`fault:${epoch}:${fault.id}`), fault.every, fault.count ?? -1),
        );
        fault.seen = seen as number;
        fault.fired = fired as number;
        if (struck === 1) return fault;
      }
      return undefined;
    },
  };
}

export type RedisFaults = ReturnType<typeof createRedisFaults>;
