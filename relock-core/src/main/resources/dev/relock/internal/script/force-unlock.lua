-- force-unlock.lua: an operator's release, whoever holds the lock; the next waiter is woken.
-- uses queue.lua
--
-- KEYS[1] lock    hash: owner -> hold count (see acquire.lua)
-- KEYS[2] queue   zset of waiters (see queue.lua)
-- KEYS[3] expiry  hash of waiter deadlines (see queue.lua)
-- ARGV[1] handoff grace in ms
-- ARGV[2] wake-up channel prefix
-- Returns 1 when a lock was deleted, 0 when it was not held.
local lock, queue, expiry = KEYS[1], KEYS[2], KEYS[3]
-- HLEN fails with WRONGTYPE on a key that is not a lock, before anything is written
if redis.call('HLEN', lock) == 0 then return 0 end
redis.call('DEL', lock)
local now_ms = server_time()
hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[1]), ARGV[2])
return 1
