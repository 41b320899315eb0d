-- single/permits-withdraw.lua: a waiter for permits leaves the queue (timed out, interrupted, client
-- closed), optionally giving back permits whose acquisition reply it never saw.
-- uses queue.lua
--
-- KEYS[1] sem, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] leases (see queue.lua)
-- ARGV[1] holder id
-- ARGV[2] '1' to also give back what the holder holds (its id is new, so it can only be from
--         the attempt whose reply was lost), else '0'
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up route (see queue.lua)
-- (no kind letter, unlike withdraw.lua: a semaphore has one kind of hold)
-- Returns 1 when permits were given back, else 0.
local sem, queue, expiry, leases = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local holder = ARGV[1]

-- read only as a type guard: a semaphore key of another type fails (WRONGTYPE) before any write
redis.call('HGET', sem, '~limit')
local was_head = redis.call('ZRANGE', queue, 0, 0)[1] == holder
redis.call('ZREM', queue, holder)
redis.call('HDEL', expiry, holder)
local undone = 0
local permits = redis.call('HGET', sem, holder)
if ARGV[2] == '1' and permits then
  redis.call('HDEL', sem, holder, 'c|' .. holder)
  redis.call('HINCRBY', sem, '~used', -tonumber(permits))
  redis.call('ZREM', leases, holder)
  undone = 1
end
if undone == 1 or was_head then
  hand_off(sem, queue, expiry, server_time(), tonumber(ARGV[3]), ARGV[4], false)
end
return undone
