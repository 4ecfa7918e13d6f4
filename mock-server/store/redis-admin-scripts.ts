/**
 * The admin state on Redis, one key per entity, each change one script (atomic: nothing interleaves with
 * it, and it never rewrites what it does not change). Every change ends the same way: the admin version
 * goes up by one and is published, so every instance knows there is something to read and none takes an
 * older state over a newer one. Keys are named by the caller (`RedisAdmin` in redis-admin.ts); values of
 * entity fields are JSON text, so scripts copy them without decoding.
 */

/** The end of every change: the new admin version, published. ARGV[1] of each script is the channel. */
const BUMP = (versionKey: string) => `
local v = redis.call('INCR', ${versionKey})
redis.call('PUBLISH', ARGV[1], v)
return v`;

/**
 * KEYS: agent ids (set), API keys (hash key -> id), generations, agent order counter, version.
 * ARGV: channel, agent key prefix, id, API key, then field/value pairs. -1: the id exists; -2: the key is used.
 * A new agent starts at the generation its id has in the store: revocations outlive the agent.
 */
export const CREATE_AGENT = `
if redis.call('SISMEMBER', KEYS[1], ARGV[3]) == 1 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 1 then return -2 end
local key = ARGV[2] .. ARGV[3]
redis.call('DEL', key)
for i = 5, #ARGV, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
redis.call('HSET', key, 'generation', redis.call('HGET', KEYS[3], ARGV[3]) or '0')
redis.call('HSET', key, 'order', redis.call('INCR', KEYS[4]))
redis.call('SADD', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[4], ARGV[3])
${BUMP('KEYS[5]')}`;

/** KEYS: the entity's hash, version. ARGV: channel, 1 if it must exist, then field/value pairs. -1: none. */
export const SET_FIELDS = `
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
${BUMP('KEYS[2]')}`;

/**
 * KEYS: the agent's hash, generations, version. ARGV: channel, id. The agent's generation goes one past the
 * higher of its own and the store's (read by every instance's admission script: refused everywhere at once).
 */
export const REVOKE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local g = math.max(tonumber(redis.call('HGET', KEYS[1], 'generation') or '0'),
  tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')) + 1
redis.call('HSET', KEYS[1], 'generation', g)
redis.call('HSET', KEYS[2], ARGV[2], g)
${BUMP('KEYS[3]')}`;

/** KEYS: faults (hash id -> spec), fault counter, version. ARGV: channel, spec. Returns {version, n}: fault-n. */
export const ARM_FAULT = `
local n = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'fault-' .. n, ARGV[2])
local v = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[1], v)
return {v, n}`;

/** KEYS: faults, version. ARGV: channel, id (empty: every fault). -1: no such fault. */
export const DISARM = `
if ARGV[2] == '' then redis.call('DEL', KEYS[1])
elseif redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then return -1 end
${BUMP('KEYS[2]')}`;

/**
 * KEYS: clock (hash offset, frozenAt, epoch), version. ARGV: channel, kind, real now (ms), value, '1' to
 * freeze first / '0' to resume after (set), the latest time the clock may show. The steps of clock.ts, on
 * the store's copy, so concurrent changes add up (two advances of 1 s move it 2 s); a change that moves the
 * clock into its past starts a new epoch, as clock.ts counts them. -1: past the latest time.
 */
export const CLOCK = `
local offset = tonumber(redis.call('HGET', KEYS[1], 'offset') or '0')
local frozenAt = redis.call('HGET', KEYS[1], 'frozenAt')
if frozenAt then frozenAt = tonumber(frozenAt) end
local real = tonumber(ARGV[3])
local value = tonumber(ARGV[4])
local function now() if frozenAt then return frozenAt end return real + offset end
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local before = now()
local kind = ARGV[2]
if kind == 'freeze' then
  if not frozenAt then frozenAt = now() end
elseif kind == 'resume' then
  if frozenAt then offset = frozenAt - real; frozenAt = nil end
elseif kind == 'reset' then
  offset = 0; frozenAt = nil
elseif kind == 'advance' then
  if now() + value > tonumber(ARGV[6]) then return -1 end
  if frozenAt then frozenAt = frozenAt + value else offset = offset + value end
elseif kind == 'set' then
  if ARGV[5] == '1' and not frozenAt then frozenAt = now() end
  if frozenAt then frozenAt = value else offset = value - real end
  if ARGV[5] == '0' and frozenAt then offset = frozenAt - real; frozenAt = nil end
end
if now() < before then epoch = epoch + 1 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'offset', string.format('%.0f', offset), 'epoch', epoch)
if frozenAt then redis.call('HSET', KEYS[1], 'frozenAt', string.format('%.0f', frozenAt)) end
${BUMP('KEYS[2]')}`;

/**
 * The whole admin state at one version. KEYS: version, seed, agent ids, faults, clock, scenario, epoch.
 * ARGV: channel (unused), agent key prefix, tool key prefix, tool names. Returns {version, seed, scenario, epoch, clock
 * fields, fault fields, {id, agent fields}..., {tool, tool fields}...}.
 */
export const READ_ALL = `
local agents = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  agents[#agents + 1] = {id, redis.call('HGETALL', ARGV[2] .. id)}
end
local tools = {}
for i = 4, #ARGV do tools[#tools + 1] = {ARGV[i], redis.call('HGETALL', ARGV[3] .. ARGV[i])} end
return {redis.call('GET', KEYS[1]) or '0', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[6]) or '',
  redis.call('GET', KEYS[7]) or '0', redis.call('HGETALL', KEYS[5]), redis.call('HGETALL', KEYS[4]), agents, tools}`;

/**
 * Writes a whole admin state: `seed` into a store that holds none (start, after a wipe: 0 when it holds one),
 * `replace` for a reset or scenario (every count starts over: the epoch moves). KEYS: version, seed, agent
 * ids, API keys, faults, fault counter, clock, scenario, generations, epoch, agent order counter. ARGV:
 * channel, mode, agent key prefix, tool key prefix, seed id, the state (JSON, numbers as strings). Token
 * generations never go back.
 */
export const WRITE_ALL = `
if ARGV[2] == 'seed' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local s = cjson.decode(ARGV[6])
for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do redis.call('DEL', ARGV[3] .. id) end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[7], KEYS[8])
for i, a in ipairs(s.agents) do
  local key = ARGV[3] .. a.id
  for j = 1, #a.fields, 2 do redis.call('HSET', key, a.fields[j], a.fields[j + 1]) end
  local g = math.max(tonumber(a.generation), tonumber(redis.call('HGET', KEYS[9], a.id) or '0'))
  redis.call('HSET', key, 'generation', g, 'order', i)
  if g > 0 then redis.call('HSET', KEYS[9], a.id, g) end
  redis.call('SADD', KEYS[3], a.id)
  redis.call('HSET', KEYS[4], a.apiKey, a.id)
end
if tonumber(redis.call('GET', KEYS[11]) or '0') < #s.agents then redis.call('SET', KEYS[11], #s.agents) end
for _, t in ipairs(s.tools) do
  local key = ARGV[4] .. t.name
  redis.call('DEL', key)
  for j = 1, #t.fields, 2 do redis.call('HSET', key, t.fields[j], t.fields[j + 1]) end
end
for _, f in ipairs(s.faults) do redis.call('HSET', KEYS[5], f[1], f[2]) end
if tonumber(redis.call('GET', KEYS[6]) or '0') < tonumber(s.lastFault) then redis.call('SET', KEYS[6], s.lastFault) end
redis.call('HSET', KEYS[7], 'offset', s.clock.offset, 'epoch', s.clock.epoch)
if s.clock.frozenAt ~= '' then redis.call('HSET', KEYS[7], 'frozenAt', s.clock.frozenAt) end
if s.scenario ~= '' then redis.call('SET', KEYS[8], s.scenario) end
local v
if ARGV[2] == 'seed' then
  redis.call('SET', KEYS[2], ARGV[5])
  v = tonumber(redis.call('GET', KEYS[1]) or '0') + 1
  redis.call('SET', KEYS[1], v)
else
  redis.call('INCR', KEYS[10])
  v = redis.call('INCR', KEYS[1])
end
redis.call('PUBLISH', ARGV[1], v)
return v`;
