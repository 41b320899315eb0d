-- single/permits-admin.lua: set, change or read the number of permits of a semaphore.
-- uses queue.lua
--
-- KEYS[1] sem, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] leases (see queue.lua)
-- ARGV[1] 'set'       set the number of permits to ARGV[2] unless it is set already
--         'add'       add ARGV[2] (may be negative) to the number of permits
--         'available' read how many permits are free now
-- for 'set' and 'add' only ('available' takes none of them):
-- ARGV[2] the number
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up route (see queue.lua)
-- Returns for 'set': 1 when set, 0 when it was set already
--         for 'add': the new number of permits, or -1 when it would fall below 0 (nothing changed)
--         for 'available': the free permits (negative when permits were taken away while held),
--                          or -3 when no number of permits is set
--         -3 for 'add' when no number of permits is set
local sem, queue, expiry, leases = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local op, n = ARGV[1], tonumber(ARGV[2])

local limit = redis.call('HGET', sem, '~limit')
local now_ms = server_time()
if op == 'set' then
  if limit then return 0 end
  redis.call('HSET', sem, '~limit', n)
  hand_off(sem, queue, expiry, now_ms, tonumber(ARGV[3]), ARGV[4], false)
  return 1
end
if not limit then return -3 end
if op == 'add' then
  local total = tonumber(limit) + n
  if total < 0 then return -1 end
  redis.call('HSET', sem, '~limit', total)
  if n > 0 then hand_off(sem, queue, expiry, now_ms, tonumber(ARGV[3]), ARGV[4], false) end
  return total
end
return tonumber(limit) - live_permits(sem, leases, now_ms)
