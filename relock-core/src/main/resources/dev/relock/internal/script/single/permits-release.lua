-- single/permits-release.lua: a holder gives its permits back; the next waiter gets its turn.
-- uses queue.lua
--
-- KEYS[1] sem, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] leases (see queue.lua)
-- ARGV[1] holder id
-- ARGV[2] handoff grace in ms
-- ARGV[3] wake-up route (see queue.lua)
-- (no hold count, unlike release.lua: a holder's permits always go back together)
-- Returns 0 when given back, -1 when the holder held nothing: its lease ran out.
local sem, queue, expiry, leases = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local holder = ARGV[1]

-- read only as a type guard: a semaphore key of another type fails (WRONGTYPE) before any write
redis.call('HGET', sem, '~limit')
local now_ms = server_time()
live_permits(sem, leases, now_ms)
local permits = redis.call('HGET', sem, holder)
if not permits then return -1 end
redis.call('HDEL', sem, holder, 'c|' .. holder)
redis.call('HINCRBY', sem, '~used', -tonumber(permits))
redis.call('ZREM', leases, holder)
hand_off(sem, queue, expiry, now_ms, tonumber(ARGV[2]), ARGV[3], false)
return 0
