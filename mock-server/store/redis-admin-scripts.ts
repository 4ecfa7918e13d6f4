/**
 * The admin state on Redis, one key per entity, each change one script (atomic: nothing interleaves with
 * it, and it never rewrites what it does not change). Every value a change writes carries a **stamp**: the
 * store's time in microseconds, or one past the highest stamp the store or the calling instance has seen,
 * whichever is greater, so a later change always has a higher stamp, in this life of the store and across
 * a restart that emptied it. A field's stamp sits beside it in its hash (`~name` beside `name`). After a
 * loss the store is rebuilt by MERGE from what the instances hold, per field the newest stamp winning: an
 * older copy never overwrites a newer value (docs/operators.md, "What survives what").
 *
 * Every script takes KEYS = {generations, limits epoch} and ARGV = {channel, admin key prefix, the highest
 * stamp the caller has seen, ...its own arguments}. Every change ends the same way: the admin version goes
 * up by one, the version's own stamp (`head`) goes into the history, and the version is published, so every instance
 * knows there is something to read. A change refuses with
 * NOT_REBUILT (-9) while the store holds no admin state at all (emptied, not yet merged back): nothing is
 * decided on a store that may have lost the entity. Values of entity fields are JSON text, so scripts copy
 * them without decoding.
 */

/**
 * How many versions back the store remembers which change made each one (`history`: version -> a stamp
 * drawn for it). An instance checks that the version it read last is still the one it read: a store
 * restarted from a snapshot older than that version, then changed again, has reached and passed it with
 * other changes (docs/operators.md, "The rule for admin changes"). An instance further behind merges its
 * copy (harmless: newest value wins).
 */
const HISTORY = 1024;

/** What every script starts with: names, the stamp, the end of a change. */
const PRELUDE = `
local P = ARGV[2]
local GEN, EPOCH = KEYS[1], KEYS[2]
local function num(v) if not v then return -1 end return tonumber(v) or -1 end
local function fmt(n) return string.format('%.0f', n) end
local function rebuilt() return redis.call('EXISTS', P .. 'seed') == 1 end
local function stamp()
  local t = redis.call('TIME')
  local s = math.max(tonumber(t[1]) * 1000000 + tonumber(t[2]), num(redis.call('GET', P .. 'stamp')) + 1,
    num(ARGV[3]) + 1)
  redis.call('SET', P .. 'stamp', fmt(s))
  return s
end
local function bump()
  local v = redis.call('INCR', P .. 'version')
  local head = fmt(stamp())
  redis.call('SET', P .. 'head', head)
  redis.call('HSET', P .. 'history', v, head)
  redis.call('HDEL', P .. 'history', v - ${HISTORY})
  redis.call('PUBLISH', ARGV[1], v)
  return v
end
-- A value's stamp (\`~name\` beside it, \`valueField\` the value; default \`name\`). A value without one was
-- written by a version before stamps: it counts as stamped 0, as old as a config (so a config merged in
-- does not overwrite it, and any change does).
local function stampOf(key, name, valueField)
  local st = redis.call('HGET', key, '~' .. name)
  if st then return tonumber(st) end
  if redis.call('HEXISTS', key, valueField or name) == 1 then return 0 end
  return -1
end
local function unkey(key, id)
  local json = redis.call('HGET', key, 'api_key')
  if json and redis.call('HGET', P .. 'api_keys', cjson.decode(json)) == id then
    redis.call('HDEL', P .. 'api_keys', cjson.decode(json))
  end
end
`;

/** The stamp fields of an agent's changeable values (its API key and incarnation are `~born`). */
const AGENT_STAMPED = `local AGENT_FIELDS = {'name', 'tier', 'allowlist', 'disabled'}`;

/**
 * ARGV: id, API key, then field/value pairs. Returns {version, stamp}; {-1}: the id exists; {-2}: the key is
 * used. A new agent starts at the generation its id has in the store: revocations outlive the agent.
 */
export const CREATE_AGENT = `${PRELUDE}${AGENT_STAMPED}
if not rebuilt() then return {-9} end
local id = ARGV[4]
local key = P .. 'agent:' .. id
if redis.call('EXISTS', key) == 1 then return {-1} end
if redis.call('HEXISTS', P .. 'api_keys', ARGV[5]) == 1 then return {-2} end
local s = fmt(stamp())
for i = 6, #ARGV, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
redis.call('HSET', key, 'generation', redis.call('HGET', GEN, id) or '0', 'order',
  redis.call('INCR', P .. 'agent_order'), '~born', s)
for _, f in ipairs(AGENT_FIELDS) do redis.call('HSET', key, '~' .. f, s) end
redis.call('SADD', P .. 'agents', id)
redis.call('HSET', P .. 'api_keys', ARGV[5], id)
return {bump(), s}`;

/**
 * ARGV: the entity's key after the prefix (agent:<id>, tool:<name>), '1' if it must exist, then field/value
 * pairs, each written with its stamp. Returns {version, stamp}; {-1}: no such entity.
 */
export const SET_FIELDS = `${PRELUDE}
if not rebuilt() then return {-9} end
local key = P .. ARGV[4]
if ARGV[5] == '1' and redis.call('EXISTS', key) == 0 then return {-1} end
local s = fmt(stamp())
for i = 6, #ARGV, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1], '~' .. ARGV[i], s) end
return {bump(), s}`;

/**
 * ARGV: id. The agent's generation moves to the revoke's stamp (past its own and the store's: read by every
 * instance's admission script, refused everywhere at once). A stamp, not one more than the store holds: a
 * store rebuilt from copies that missed the last revoke must not give the same generation twice (a token
 * minted between the two would survive the second). Returns {version, stamp, generation}; {-1}: no such agent.
 */
export const REVOKE = `${PRELUDE}
if not rebuilt() then return {-9} end
local key = P .. 'agent:' .. ARGV[4]
if redis.call('EXISTS', key) == 0 then return {-1} end
local s = stamp()
local g = fmt(math.max(num(redis.call('HGET', key, 'generation')) + 1, num(redis.call('HGET', GEN, ARGV[4])) + 1, s))
redis.call('HSET', key, 'generation', g)
redis.call('HSET', GEN, ARGV[4], g)
return {bump(), fmt(s), g}`;

/** ARGV: spec. Returns {version, stamp, n}: the fault is fault-n. */
export const ARM_FAULT = `${PRELUDE}
if not rebuilt() then return {-9} end
local n = redis.call('INCR', P .. 'fault_counter')
local s = fmt(stamp())
redis.call('HSET', P .. 'faults', 'fault-' .. n, ARGV[4], '~fault-' .. n, s)
return {bump(), s, n}`;

/**
 * ARGV: id (empty: every fault). A disarmed fault stays as an empty spec with its stamp, and clearing every
 * fault stamps 'faults_cleared', so a copy that still holds the fault never arms it again. {-1}: no such fault.
 */
export const DISARM = `${PRELUDE}
if not rebuilt() then return {-9} end
local s
if ARGV[4] == '' then
  s = fmt(stamp())
  redis.call('DEL', P .. 'faults')
  redis.call('SET', P .. 'faults_cleared', s)
else
  local spec = redis.call('HGET', P .. 'faults', ARGV[4])
  if not spec or spec == '' then return {-1} end
  s = fmt(stamp())
  redis.call('HSET', P .. 'faults', ARGV[4], '', '~' .. ARGV[4], s)
end
return {bump(), s}`;

/**
 * ARGV: kind, real now (ms), value, '1' to freeze first / '0' to resume after (set), the latest time the
 * clock may show. The steps of clock.ts, on the store's copy, so concurrent changes add up (two advances of
 * 1 s move it 2 s); a change that moves the clock into its past starts a new epoch, as clock.ts counts them.
 * {-1}: past the latest time.
 */
export const CLOCK = `${PRELUDE}
if not rebuilt() then return {-9} end
local C = P .. 'clock'
local offset = tonumber(redis.call('HGET', C, 'offset') or '0')
local frozenAt = redis.call('HGET', C, 'frozenAt')
if frozenAt then frozenAt = tonumber(frozenAt) end
local real = tonumber(ARGV[5])
local value = tonumber(ARGV[6])
local function now() if frozenAt then return frozenAt end return real + offset end
local epoch = tonumber(redis.call('HGET', C, 'epoch') or '0')
local before = now()
local kind = ARGV[4]
if kind == 'freeze' then
  if not frozenAt then frozenAt = now() end
elseif kind == 'resume' then
  if frozenAt then offset = frozenAt - real; frozenAt = nil end
elseif kind == 'reset' then
  offset = 0; frozenAt = nil
elseif kind == 'advance' then
  if now() + value > tonumber(ARGV[8]) then return {-1} end
  if frozenAt then frozenAt = frozenAt + value else offset = offset + value end
elseif kind == 'set' then
  if ARGV[7] == '1' and not frozenAt then frozenAt = now() end
  if frozenAt then frozenAt = value else offset = value - real end
  if ARGV[7] == '0' and frozenAt then offset = frozenAt - real; frozenAt = nil end
end
if now() < before then epoch = epoch + 1 end
local s = fmt(stamp())
redis.call('DEL', C)
redis.call('HSET', C, 'offset', fmt(offset), 'epoch', epoch, '~', s)
if frozenAt then redis.call('HSET', C, 'frozenAt', fmt(frozenAt)) end
return {bump(), s}`;

/**
 * The whole admin state at one version. ARGV: a version the caller read before ('' for none), tool names.
 * Returns {version, seed, scenario, epoch, clock fields, fault fields, {id, agent fields}..., {tool, tool
 * fields}..., replaced, faults cleared, stamp, the version's stamp in the history, the earlier version's}
 * (stamps included, as `~` fields; '' where the history holds none).
 */
export const READ_ALL = `${PRELUDE}
local agents = {}
for _, id in ipairs(redis.call('SMEMBERS', P .. 'agents')) do
  agents[#agents + 1] = {id, redis.call('HGETALL', P .. 'agent:' .. id)}
end
local tools = {}
for i = 5, #ARGV do tools[#tools + 1] = {ARGV[i], redis.call('HGETALL', P .. 'tool:' .. ARGV[i])} end
local version = redis.call('GET', P .. 'version') or '0'
local before = ''
if ARGV[4] ~= '' then before = redis.call('HGET', P .. 'history', ARGV[4]) or '' end
return {version, redis.call('GET', P .. 'seed') or '',
  redis.call('GET', P .. 'scenario') or '', redis.call('GET', EPOCH) or '0', redis.call('HGETALL', P .. 'clock'),
  redis.call('HGETALL', P .. 'faults'), agents, tools, redis.call('GET', P .. 'replaced') or '-1',
  redis.call('GET', P .. 'faults_cleared') or '-1', redis.call('GET', P .. 'stamp') or '0',
  redis.call('HGET', P .. 'history', version) or '', before}`;

/**
 * Writes one agent of a state (JSON: id, apiKey, generation, order, born, fields = {name, value, stamp}...)
 * whole into its emptied hash.
 */
const WRITE_AGENT = `
local function writeAgent(a)
  local key = P .. 'agent:' .. a.id
  redis.call('DEL', key)
  for _, f in ipairs(a.fields) do redis.call('HSET', key, f[1], f[2], '~' .. f[1], f[3]) end
  local g = fmt(math.max(tonumber(a.generation), num(redis.call('HGET', GEN, a.id)), 0))
  redis.call('HSET', key, 'generation', g, 'order', a.order, '~born', a.born,
    'api_key', cjson.encode(a.apiKey), 'incarnation', cjson.encode(a.incarnation))
  if tonumber(g) > 0 then redis.call('HSET', GEN, a.id, g) end
  redis.call('SADD', P .. 'agents', a.id)
  redis.call('HSET', P .. 'api_keys', a.apiKey, a.id)
  if num(redis.call('GET', P .. 'agent_order')) < tonumber(a.order) then
    redis.call('SET', P .. 'agent_order', a.order)
  end
end
`;

/**
 * A reset or scenario: writes a whole admin state, every value stamped with one new stamp, and records
 * that stamp as 'replaced': whatever was stamped before it is gone, in the store and in any copy merged
 * back later. Every count starts over (the limits' epoch moves). ARGV: seed id (used if the store holds
 * none), the state (JSON, as MERGE takes it; its stamps are ignored). Returns {version, stamp}.
 */
export const REPLACE = `${PRELUDE}${WRITE_AGENT}
local s = cjson.decode(ARGV[5])
local r = fmt(stamp())
if not rebuilt() then redis.call('SET', P .. 'seed', ARGV[4]) end
for _, id in ipairs(redis.call('SMEMBERS', P .. 'agents')) do redis.call('DEL', P .. 'agent:' .. id) end
redis.call('DEL', P .. 'agents', P .. 'api_keys', P .. 'faults', P .. 'clock', P .. 'scenario')
for _, a in ipairs(s.agents) do
  a.born = r
  for _, f in ipairs(a.fields) do f[3] = r end
  writeAgent(a)
end
for _, t in ipairs(s.tools) do
  local key = P .. 'tool:' .. t.name
  redis.call('DEL', key)
  for _, f in ipairs(t.fields) do redis.call('HSET', key, f[1], f[2], '~' .. f[1], r) end
end
for _, f in ipairs(s.faults) do
  if f[2] ~= '' then redis.call('HSET', P .. 'faults', f[1], f[2], '~' .. f[1], r) end
end
if num(redis.call('GET', P .. 'fault_counter')) < tonumber(s.lastFault) then
  redis.call('SET', P .. 'fault_counter', s.lastFault)
end
redis.call('HSET', P .. 'clock', 'offset', s.clock.offset, 'epoch', s.clock.epoch, '~', r)
if s.clock.frozenAt ~= '' then redis.call('HSET', P .. 'clock', 'frozenAt', s.clock.frozenAt) end
if s.scenario ~= '' then redis.call('SET', P .. 'scenario', s.scenario) end
redis.call('SET', P .. 'replaced', r)
redis.call('SET', P .. 'faults_cleared', r)
redis.call('INCR', EPOCH)
return {bump(), r}`;

/**
 * Merges an instance's copy of the admin state into the store, per value the newest stamp winning: how a
 * store that lost its state (restart without persistence, FLUSHALL, eviction, failover) is rebuilt from the
 * instances, each merging what it holds when it notices, in any order, as often as it likes (the result is
 * the same). A newer reset in the copy drops what the store holds from before it; values older than the
 * store's reset are ignored; a copy's agent of an older life than the store's (created again since) is
 * ignored; token generations take the higher. Sets a new seed (ARGV 4) when the store holds none.
 * ARGV: seed id, the copy (JSON: replaced, cleared, top, scenario, lastFault, agents, tools, faults, clock).
 * Returns {version, seed}.
 */
export const MERGE = `${PRELUDE}${WRITE_AGENT}${AGENT_STAMPED}
local s = cjson.decode(ARGV[5])
local changed = false
if not rebuilt() then redis.call('SET', P .. 'seed', ARGV[4]); changed = true end
if num(redis.call('GET', P .. 'stamp')) < tonumber(s.top) then redis.call('SET', P .. 'stamp', s.top) end
local R = num(redis.call('GET', P .. 'replaced'))
local LR = tonumber(s.replaced)
if LR > R then
  -- The store lost a reset this copy saw: what the store holds from before it goes.
  for _, id in ipairs(redis.call('SMEMBERS', P .. 'agents')) do
    local key = P .. 'agent:' .. id
    if stampOf(key, 'born', 'api_key') < LR then
      unkey(key, id)
      redis.call('DEL', key)
      redis.call('SREM', P .. 'agents', id)
    end
  end
  for _, t in ipairs(s.tools) do
    local key = P .. 'tool:' .. t.name
    local flat = redis.call('HGETALL', key)
    for i = 1, #flat, 2 do
      if string.sub(flat[i], 1, 1) == '~' and num(flat[i + 1]) < LR then
        redis.call('HDEL', key, flat[i], string.sub(flat[i], 2))
      end
    end
  end
  if stampOf(P .. 'clock', '', 'offset') < LR then redis.call('DEL', P .. 'clock') end
  redis.call('DEL', P .. 'scenario')
  if s.scenario ~= '' then redis.call('SET', P .. 'scenario', s.scenario) end
  redis.call('SET', P .. 'replaced', s.replaced)
  R = LR
  changed = true
end
-- Faults: cleared-all stamps, then each fault (an empty spec: disarmed) by its stamp.
local cleared = math.max(num(redis.call('GET', P .. 'faults_cleared')), tonumber(s.cleared), R)
if num(redis.call('GET', P .. 'faults_cleared')) < cleared then
  redis.call('SET', P .. 'faults_cleared', fmt(cleared))
  local flat = redis.call('HGETALL', P .. 'faults')
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, 1) == '~' and num(flat[i + 1]) < cleared then
      redis.call('HDEL', P .. 'faults', flat[i], string.sub(flat[i], 2))
    end
  end
  changed = true
end
for _, f in ipairs(s.faults) do
  local st = tonumber(f[3])
  if st > cleared and st > stampOf(P .. 'faults', f[1]) then
    redis.call('HSET', P .. 'faults', f[1], f[2], '~' .. f[1], f[3])
    changed = true
  end
end
if num(redis.call('GET', P .. 'fault_counter')) < tonumber(s.lastFault) then
  redis.call('SET', P .. 'fault_counter', s.lastFault)
end
-- Agents: a missing one (or one of an older life) whole, then each value by its stamp.
for _, a in ipairs(s.agents) do
  local key = P .. 'agent:' .. a.id
  local born = tonumber(a.born)
  local held = stampOf(key, 'born', 'api_key')
  if born >= R and held < born then
    local holder = redis.call('HGET', P .. 'api_keys', a.apiKey)
    if not holder or holder == a.id then
      unkey(key, a.id)
      writeAgent(a)
      changed = true
    end
  elseif born == held then
    for _, f in ipairs(a.fields) do
      if tonumber(f[3]) > stampOf(key, f[1]) then
        redis.call('HSET', key, f[1], f[2], '~' .. f[1], f[3])
        changed = true
      end
    end
    if tonumber(a.generation) > num(redis.call('HGET', key, 'generation')) then
      redis.call('HSET', key, 'generation', a.generation)
      changed = true
    end
  end
  if tonumber(a.generation) > num(redis.call('HGET', GEN, a.id)) and tonumber(a.generation) > 0 then
    redis.call('HSET', GEN, a.id, a.generation)
    changed = true
  end
end
-- Tools, value by value.
for _, t in ipairs(s.tools) do
  local key = P .. 'tool:' .. t.name
  for _, f in ipairs(t.fields) do
    local st = tonumber(f[3])
    if st >= R and st > stampOf(key, f[1]) then
      redis.call('HSET', key, f[1], f[2], '~' .. f[1], f[3])
      changed = true
    end
  end
end
-- The clock, whole.
local cs = tonumber(s.clock.stamp)
if cs >= R and cs > stampOf(P .. 'clock', '', 'offset') then
  redis.call('DEL', P .. 'clock')
  redis.call('HSET', P .. 'clock', 'offset', s.clock.offset, 'epoch', s.clock.epoch, '~', s.clock.stamp)
  if s.clock.frozenAt ~= '' then redis.call('HSET', P .. 'clock', 'frozenAt', s.clock.frozenAt) end
  changed = true
end
local v
if changed then v = bump() else v = tonumber(redis.call('GET', P .. 'version') or '0') end
return {v, redis.call('GET', P .. 'seed')}`;
