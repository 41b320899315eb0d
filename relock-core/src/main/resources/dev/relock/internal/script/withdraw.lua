-- withdraw.lua: a waiter leaves the queue (it timed out, was interrupted or its client closed),
-- optionally undoing an acquisition whose reply it never saw.
-- uses queue.lua
--
-- KEYS[1] lock    hash: owner -> hold count (see acquire.lua)
-- KEYS[2] queue   zset of waiters (see queue.lua)
-- KEYS[3] expiry  hash of waiter deadlines (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] '1' to also delete the lock when the owner holds it exactly once (an acquire that
--         timed out on the client may still have been applied), else '0'
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up channel prefix
-- Returns 1 when a hold was undone, else 0.
local lock, queue, expiry = KEYS[1], KEYS[2], KEYS[3]
local owner = ARGV[1]

local was_head = redis.call('ZRANGE', queue, 0, 0)[1] == owner
redis.call('ZREM', queue, owner)
redis.call('HDEL', expiry, owner)
local undone = 0
if ARGV[2] == '1' and redis.call('HGET', lock, owner) == '1' then
  redis.call('DEL', lock)
  undone = 1
end
if (undone == 1 or was_head) and redis.call('EXISTS', lock) == 0 then
  local now_ms = server_time()
  hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[3]), ARGV[4])
end
return undone
