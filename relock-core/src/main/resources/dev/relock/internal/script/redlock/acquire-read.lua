-- redlock/acquire-read.lua: takes the read (shared) side of a Redlock lock on ONE node, unless
-- another owner holds the write side there, or (for a new reader here) another owner waits for
-- the write side (writer preference: a stream of readers cannot starve a writer). The client
-- sends it to every node at once and holds the read lock only when a majority said 1. Keys as in
-- acquire.lua.
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue (not read here), KEYS[4] expiry, KEYS[5] readers (see
--         acquire.lua)
-- ARGV[1] owner id, ARGV[2] lease in ms, ARGV[3] this attempt's id, ARGV[4] the token it proposes
-- (acquire.lua's ARGV[1], [2], [5] and [6]: a reader has no mark, no wait and no place)
-- Returns {1, token} when the owner reads here now: freshly with a new token, or already (its read
--   lease is made at least ARGV[2] and its token kept); the owner's own write lock does not
--   keep it out (downgrade);
--   {0, pttl, holder} when another owner writes here (holder: its owner id, '' for a key relock
--   did not make; pttl: the lock's lease left in ms, -1 without expiry);
--   {0, ms, '~writer-waiting'} when a writer waits here (ms: until its mark ends unless renewed).
-- The owner's own write lock, or a read hold it already has here, lets it past waiting writers
-- (a downgrade must not wait for a writer that waits for it).
local lock, fence, expiry, readers = KEYS[1], KEYS[2], KEYS[4], KEYS[5]
local owner, lease = ARGV[1], tonumber(ARGV[2])
local member = 'r|' .. owner

local writer = redis.call('HGET', lock, '~writer')
if writer and writer ~= owner then
  return {0, redis.call('PTTL', lock), writer}
end
local now_ms, now_us = server_time()
live_readers(lock, readers, now_ms)
local token = redis.call('HGET', lock, 't|' .. owner)
if not token and not writer then
  local marks = redis.call('HGETALL', expiry)
  local left = 0
  for i = 1, #marks, 2 do
    -- '~g|' fields are a writer's turn or grant offer (acquire.lua), not marks
    if string.sub(marks[i], 1, 3) ~= '~g|' then
      local ends = tonumber(marks[i + 1])
      if ends <= now_ms then
        redis.call('HDEL', expiry, marks[i])
      elseif marks[i] ~= owner and ends - now_ms > left then
        left = ends - now_ms
      end
    end
  end
  if left > 0 then return {0, left, '~writer-waiting'} end
end
if not token then
  if not writer and redis.call('EXISTS', lock) == 1 and redis.call('ZCARD', readers) == 0 then
    return {0, redis.call('PTTL', lock), ''}
  end
  -- a proposal more than 1 s ahead of this node's clock is not taken (see acquire.lua)
  local _, text = next_token(fence, now_us, tonumber(ARGV[4]))
  token = text
  redis.call('HSET', lock, member, '1', 't|' .. owner, token)
end
-- ids only grow: an older attempt that arrives late must not claim a later one's hold
if tonumber(ARGV[3]) > tonumber(redis.call('HGET', lock, 'a|' .. owner) or '0') then
  redis.call('HSET', lock, 'a|' .. owner, ARGV[3])
end
if tonumber(redis.call('ZSCORE', readers, owner) or '0') < now_ms + lease then
  redis.call('ZADD', readers, now_ms + lease, owner)
end
extend(lock, readers, lease)
return {1, tonumber(token)}
