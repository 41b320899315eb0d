-- release.lua: give up one hold (or every hold) of an owner; hand the lock to the next waiter
-- when the last hold goes.
-- uses queue.lua
--
-- KEYS[1] lock    hash: owner -> hold count (see acquire.lua)
-- KEYS[2] queue   zset of waiters (see queue.lua)
-- KEYS[3] expiry  hash of waiter deadlines (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] 'one' to give up one hold, 'all' to give up every hold of the owner
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up channel prefix
-- Returns the owner's holds left (0 = the lock is free), or -1 when the owner holds nothing:
-- its lease ran out or the lock was deleted or taken over.
local lock, queue, expiry = KEYS[1], KEYS[2], KEYS[3]
local owner = ARGV[1]

local holds = redis.call('HGET', lock, owner)
if not holds then return -1 end
if ARGV[2] == 'one' and tonumber(holds) > 1 then
  return redis.call('HINCRBY', lock, owner, -1)
end
redis.call('DEL', lock)
local now_ms = server_time()
hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[3]), ARGV[4])
return 0
