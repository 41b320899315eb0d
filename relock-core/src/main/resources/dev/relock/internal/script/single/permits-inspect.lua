-- single/permits-inspect.lua: one consistent look at a semaphore, for operators' tools. Changes nothing.
-- uses common.lua
--
-- KEYS[1] sem, KEYS[2] fence, KEYS[3] queue (neither read here), KEYS[4] expiry, KEYS[5] leases
--         (see queue.lua)
-- Returns {limit, live_waiters, longest_lease_left_ms, holder1, permits1, holder2, permits2, ...}
--   limit: the number of permits, -1 when none is set
--   holders: only those whose lease has not ended
local sem, expiry, leases = KEYS[1], KEYS[4], KEYS[5]
local now_ms = server_time()

local limit = tonumber(redis.call('HGET', sem, '~limit') or '-1')
local result = {limit, 0, 0}
for _, holder in ipairs(redis.call('ZRANGEBYSCORE', leases, '(' .. now_ms, '+inf')) do
  local permits = redis.call('HGET', sem, holder)
  if permits then
    result[#result + 1] = holder
    result[#result + 1] = tonumber(permits)
  end
end
local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')[2]
if last and tonumber(last) > now_ms then result[3] = tonumber(last) - now_ms end
local deadlines = redis.call('HGETALL', expiry)
for i = 2, #deadlines, 2 do
  if tonumber(deadlines[i]) > now_ms then result[2] = result[2] + 1 end
end
return result
