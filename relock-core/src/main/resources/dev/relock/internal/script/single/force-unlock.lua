-- single/force-unlock.lua: an operator's release of every hold, write and read; the next waiters are
-- woken, and so is the writer's client ('F', see queue.lua), which tells the writer at once.
-- Readers, and a writer whose client does not hear it (on a Cluster with sharded pub/sub, a client
-- that does not listen to the lock's channel), find out at their next renewal or release.
-- uses queue.lua
--
-- KEYS[1] lock, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] readers (see queue.lua)
-- ARGV[1] handoff grace in ms
-- ARGV[2] wake-up route (see queue.lua)
-- Returns 1 when the lock was held, 0 when it was not.
local lock, queue, expiry, readers = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
-- HLEN fails with WRONGTYPE on a key that is not a lock, before anything is written
if redis.call('HLEN', lock) == 0 then return 0 end
local writer = redis.call('HGET', lock, '~writer')
local token = redis.call('HGET', lock, '~token')
redis.call('DEL', lock, readers)
local now_ms = server_time()
hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[1]), ARGV[2], false)
if writer and token then
  wake_up(ARGV[2], writer, 'F\n' .. lock .. '\n' .. writer .. '\n' .. token)
end
return 1
