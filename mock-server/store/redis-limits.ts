import { randomUUID } from 'node:crypto';
import type { Operation, RateLimitRule } from '../config/schema.ts';
import {
  type AdmitResult,
  applies,
  keyFor,
  type LimitSubject,
  type RuleOutcome,
  windowMsOf,
} from '../limits/rate-limiter.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * One script decides a request: the token generation (revoked tokens), the agent's concurrency lease, and
 * every rate-limit rule that applies, atomically, in one round trip. The rules' arithmetic is that of
 * limits/algorithms.ts (exact integers; a clock set back moves the bucket's last refill back), on the
 * gateway clock passed in as ARGV[1], so virtual time works and Retry-After is the same on every instance.
 * Leases live on Redis's own clock (TIME): a lease of an instance that died expires `lease` ms later.
 *
 * The rules' keys are made here from the epoch in the store (reset and scenarios move it), so counts start
 * over on every instance the moment one instance resets, without waiting for its announcement.
 * KEYS: lease set, generations hash, epoch. ARGV: now, max in flight (-1: none), lease id, lease ms, agent,
 * token generation, key ttl ms, rule key prefix, then per rule: key suffix, algorithm (1 token bucket,
 * 2 fixed window, 3 sliding window), limit, window ms.
 * Returns {status, in flight or generation, then per rule: allowed, remaining, retry ms, next ms};
 * status 0 admitted, 1 over the concurrency limit, 2 over a rate limit, 3 token revoked.
 * Redis runs each command a script calls at a cost of its own (about 2-3 µs, more than most commands'
 * work), so it calls few: a rule's state is one string with its time to live (GET, then SET ... PX), the
 * live leases are counted rather than pruned (ZCOUNT; expired ones are pruned by the renewals), and the
 * lease set's time to live is set when it starts (its instances renew it): 7 commands for an admitted
 * request under one token-bucket rule, where a hash per rule and pruning on every request took 10.
 */
export const ADMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local maxIn = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[4])
local gen = tonumber(ARGV[6])
local keyTtl = ARGV[7]
local current = tonumber(redis.call('HGET', KEYS[2], ARGV[5]) or '0')
if current > gen then return {3, current} end
local function fmt(x) return string.format('%.0f', x) end
local t = redis.call('TIME')
local real = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The live leases: one that expired (its instance died) is not counted; the renewals prune them.
local inflight = redis.call('ZCOUNT', KEYS[1], '(' .. fmt(real), '+inf')
if maxIn >= 0 and inflight >= maxIn then return {1, inflight} end
-- A window that counts requests: with used of limit taken, admitted with what is left, or refused until
-- the window moves (nextMs).
local function counted(used, limit, nextMs)
  if used < limit then return 1, limit - used - 1, 0 end
  return 0, 0, nextMs
end
-- A rule's state as one string, 'a:b' (token bucket: units and last refill; fixed window: start and count).
local function pair(state)
  local sep = string.find(state, ':', 1, true)
  return tonumber(string.sub(state, 1, sep - 1)), tonumber(string.sub(state, sep + 1))
end
local n = (#ARGV - 8) / 4
local base = ARGV[8] .. (redis.call('GET', KEYS[3]) or '0') .. ':'
local out = {0, inflight}
local blocked = false
local keys, algos, states, sizes, limits = {}, {}, {}, {}, {}
for i = 1, n do
  local a = 8 + (i - 1) * 4
  local key = base .. ARGV[a + 1]
  local algo = tonumber(ARGV[a + 2])
  local limit = tonumber(ARGV[a + 3])
  local win = tonumber(ARGV[a + 4])
  keys[i], algos[i], limits[i] = key, algo, limit
  local allowed, remaining, retry, nextMs
  if algo == 1 then
    local cap = limit * win
    local units = cap
    local state = redis.call('GET', key)
    if state then
      local last
      units, last = pair(state)
      if now < last then
        last = now
        redis.call('SET', key, fmt(units) .. ':' .. fmt(now), 'PX', keyTtl)
      end
      local elapsed = math.min(math.max(0, now - last), win)
      units = math.min(cap, units + elapsed * limit)
    end
    if units >= win then
      local after = units - win
      remaining = math.floor(after / win)
      allowed, retry = 1, 0
      nextMs = math.ceil(((remaining + 1) * win - after) / limit)
    else
      allowed, remaining = 0, 0
      retry = math.ceil((win - units) / limit)
      nextMs = retry
    end
    states[i] = fmt(units - win) .. ':' .. fmt(now)
  elseif algo == 2 then
    local state = redis.call('GET', key)
    local start = math.floor(now / win) * win
    local used = 0
    if state then
      local from, count = pair(state)
      if from == start then used = count end
    end
    nextMs = start + win - now
    allowed, remaining, retry = counted(used, limit, nextMs)
    states[i] = fmt(start) .. ':' .. fmt(used + 1)
  else
    while true do
      local oldest = redis.call('LINDEX', key, 0)
      if not oldest or tonumber(oldest) > now - win then break end
      redis.call('LPOP', key)
    end
    local size = redis.call('LLEN', key)
    local oldest = now
    if size > 0 then oldest = tonumber(redis.call('LINDEX', key, 0)) end
    nextMs = oldest + win - now
    allowed, remaining, retry = counted(size, limit, nextMs)
    sizes[i] = size
  end
  if allowed == 0 then blocked = true end
  out[#out + 1] = allowed
  out[#out + 1] = remaining
  out[#out + 1] = retry
  out[#out + 1] = nextMs
end
if blocked then
  out[1] = 2
  return out
end
for i = 1, n do
  if algos[i] == 3 then
    if sizes[i] >= limits[i] then redis.call('LPOP', keys[i]) end
    redis.call('RPUSH', keys[i], fmt(now))
    redis.call('PEXPIRE', keys[i], keyTtl)
  else
    redis.call('SET', keys[i], states[i], 'PX', keyTtl)
  end
end
redis.call('ZADD', KEYS[1], real + leaseMs, ARGV[3])
-- A set with live leases has its time to live renewed by their instances (RENEW_SCRIPT).
if inflight == 0 then redis.call('PEXPIRE', KEYS[1], leaseMs * 2) end
out[2] = inflight + 1
return out
`;

/** Renews the leases this instance holds, so only a dead instance's leases expire. */
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local real = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = real + tonumber(ARGV[1])
for i = 1, #KEYS do
  -- The leases that expired (an instance that died) are pruned here, off the request path.
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', string.format('%.0f', real))
  redis.call('ZADD', KEYS[i], 'XX', expiry, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[1]) * 2)
end
return #KEYS
`;

const ALGORITHM_CODE = { token_bucket: 1, fixed_window: 2, sliding_window: 3 } as const;

/** What the shared limits decided about one request. */
export type SharedAdmission =
  | { kind: 'revoked' }
  | { kind: 'concurrency'; inFlight: number }
  | { kind: 'decided'; result: AdmitResult; inFlight: number; lease?: string };

/**
 * Rate limits and concurrency on Redis, shared by every instance using the same store and key prefix.
 * Counts start over (`forget`) by moving to a new epoch: old keys are never read again and expire.
 */
export function createRedisLimits(
  connection: RedisConnection,
  options: { leaseMs: number; keyTtlMs?: number },
) {
  const { redis } = connection;
  redis.defineCommand('agwAdmit', { lua: ADMIT_SCRIPT });
  redis.defineCommand('agwRenew', { lua: RENEW_SCRIPT });
  const call = redis as unknown as {
    agwAdmit(keys: number, ...args: (string | number)[]): Promise<number[]>;
    agwRenew(keys: number, ...args: (string | number)[]): Promise<number>;
  };
  const leaseMs = Math.max(1, Math.round(options.leaseMs));
  // Rule state outlives idle periods of a day (a frozen virtual clock may keep a window open that long).
  const keyTtlMs = options.keyTtlMs ?? 86_400_000;
  const generationsKey = connection.key('generations');
  const epochKey = connection.key('epoch');
  // Each rule's state is one string ('rs:': since rules were hashes under 'rl:', which expire unread).
  const rulePrefix = connection.key('rs:');
  let epoch = 0;
  // Where a lease is given back: its own command, or the journal's tick script (`sendReleasesWith`).
  let giveBack = (key: string, lease: string) => {
    redis.zrem(key, lease).catch(() => {});
  };
  // Sends the releases waiting, before an admission (they must reach Redis first).
  let sendReleases = () => {};
  // The leases of requests in flight on this instance, renewed every third of the lease time.
  const held = new Map<string, string>();
  const renew = async () => {
    if (held.size === 0) return;
    const keys = [...held.values()];
    await call.agwRenew(keys.length, ...keys, leaseMs, ...held.keys());
  };
  const renewal = setInterval(
    () => {
      renew().catch(() => {});
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  renewal.unref();

  return {
    get epoch() {
      return epoch;
    },
    /** Uses the counts of epoch `next` (shared: every instance reads the epoch from the store). */
    useEpoch(next: number) {
      epoch = next;
    },
    /** Starts every count over, for every instance (scenario, reset): returns the new epoch. */
    async forget(): Promise<number> {
      epoch = await redis.incr(epochKey);
      return epoch;
    },
    async loadEpoch(): Promise<number> {
      epoch = Number((await redis.get(epochKey)) ?? 0);
      return epoch;
    },

    /** Decides a request in one round trip; Redis errors reject (the caller answers 503). */
    async admit(
      rules: readonly RateLimitRule[],
      subject: LimitSubject & { generation: number },
      operation: Operation,
      now: number,
      maxInFlight: number | null | undefined,
    ): Promise<SharedAdmission> {
      if (connection.refusal) throw connection.refusal;
      const keys = [connection.key(`lease:${subject.agentId}`), generationsKey, epochKey];
      const lease = randomUUID();
      const args: (string | number)[] = [
        Math.floor(now),
        maxInFlight ?? -1,
        lease,
        leaseMs,
        subject.agentId,
        subject.generation,
        keyTtlMs,
        rulePrefix,
      ];
      const counted: { rule: RateLimitRule; key: string }[] = [];
      rules.forEach((rule, index) => {
        if (!applies(rule, subject, operation)) return;
        const key = keyFor(rule, subject, operation);
        counted.push({ rule, key });
        args.push(
          `${index}:${rule.name}:${key}`,
          ALGORITHM_CODE[rule.algorithm],
          rule.limit,
          windowMsOf(rule),
        );
      });
      // A slot given back before this admission, on this connection, reaches Redis before it.
      sendReleases();
      const reply = await connection.bounded(call.agwAdmit(keys.length, ...keys, ...args));
      const status = reply[0];
      if (status === 3) return { kind: 'revoked' };
      if (status === 1) return { kind: 'concurrency', inFlight: reply[1] as number };
      const outcomes: RuleOutcome[] = counted.map(({ rule, key }, i) => ({
        rule,
        key,
        allowed: reply[2 + i * 4] === 1,
        remaining: reply[3 + i * 4] as number,
        retryAfterMs: reply[4 + i * 4] as number,
        nextMs: reply[5 + i * 4] as number,
      })) as unknown as RuleOutcome[];
      if (status === 0) {
        held.set(lease, keys[0] as string);
        return { kind: 'decided', result: { allowed: true, outcomes }, inFlight: reply[1] as number, lease };
      }
      let blocking = outcomes[0] as RuleOutcome;
      for (const outcome of outcomes) {
        if (!outcome.allowed && (blocking.allowed || outcome.retryAfterMs > blocking.retryAfterMs))
          blocking = outcome;
      }
      // As in memory: the refused request is not counted, so rules that would have admitted it keep it in
      // their remaining quota (the script reports remaining as if it were admitted).
      for (const outcome of outcomes) if (outcome.allowed) outcome.remaining += 1;
      return {
        kind: 'decided',
        result: { allowed: false, outcomes, retryAfterMs: blocking.retryAfterMs, blocking },
        inFlight: reply[1] as number,
      };
    },

    /** Gives a lease back; if Redis is away meanwhile, the lease expires on its own. */
    release(agentId: string, lease: string): void {
      held.delete(lease);
      giveBack(connection.key(`lease:${agentId}`), lease);
    },

    /** Sends the releases with another tick's write (the journal's: one script call per tick for both). */
    sendReleasesWith(send: (key: string, lease: string) => void, sendNow: () => void): void {
      giveBack = send;
      sendReleases = sendNow;
    },

    /** Raises an agent's token generation in the store: its tokens are refused on every instance. */
    async setGeneration(agentId: string, generation: number): Promise<void> {
      await redis.eval(
        "if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 1",
        1,
        generationsKey,
        agentId,
        generation,
      );
    },
    async generations(): Promise<Record<string, string>> {
      return redis.hgetall(generationsKey);
    },

    /** Renews this instance's leases now (it happens every third of the lease time on its own). */
    renew,

    stop() {
      clearInterval(renewal);
    },
  };
}

export type RedisLimits = ReturnType<typeof createRedisLimits>;
