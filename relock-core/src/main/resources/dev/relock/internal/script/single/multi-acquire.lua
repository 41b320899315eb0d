-- single/multi-acquire.lua: take the write locks of several names at once, all or none, without
-- queueing: the multi-lock's one-round-trip path when every key is on one node. A lock counts as
-- free only as acquire.lua would grant it to a newcomer: no writer, no live reader, no live waiter.
-- uses queue.lua
--
-- KEYS[5i - 4 .. 5i]  lock, fence, queue, expiry, readers of lock i (see queue.lua)
-- ARGV[1] owner id (holds none of these locks)
-- ARGV[2] lease in ms (> 0)
-- Returns {1, token_1, ..., token_n}  every lock taken, with its fencing token
--         {0, i}                      lock i was not free; nothing was taken
local owner, lease = ARGV[1], tonumber(ARGV[2])
local count = #KEYS / 5
local now_ms, now_us = server_time()

-- every lock's first command is a read, so a key of the wrong type fails before any write
for i = 1, count do
  local base = 5 * (i - 1)
  local lock, queue, expiry, readers = KEYS[base + 1], KEYS[base + 3], KEYS[base + 4], KEYS[base + 5]
  if redis.call('HGET', lock, '~writer') or live_readers(lock, readers, now_ms) > 0
      or live_head(queue, expiry, now_ms) then
    return {0, i}
  end
end

local taken = {1}
for i = 1, count do
  local base = 5 * (i - 1)
  local lock = KEYS[base + 1]
  local token, text = next_token(KEYS[base + 2], now_us)
  redis.call('HSET', lock, '~writer', owner, owner, 1, '~token', text)
  redis.call('PEXPIRE', lock, lease)
  taken[#taken + 1] = token
end
return taken
