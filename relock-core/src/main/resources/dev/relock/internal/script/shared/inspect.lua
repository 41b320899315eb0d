-- shared/inspect.lua: one consistent look at a lock, for operators' tools. Changes nothing.
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue (neither read here), KEYS[4] expiry, KEYS[5] readers
--         (see common.lua)
-- Returns {pttl, live_waiters, writer, writer_holds, writer_token,
--          reader1, holds1, token1, reader2, holds2, token2, ...}
--   pttl: the lease left in ms; -2 when nothing holds the lock, -1 when it has no expiry
--   writer: the write holder's owner id, '' when none (then writer_holds = writer_token = 0)
--   readers: only those whose lease has not ended
local lock, expiry, readers = KEYS[1], KEYS[4], KEYS[5]
local now_ms = server_time()

local writer = redis.call('HGET', lock, '~writer')
local result = {redis.call('PTTL', lock), 0, '', 0, 0}
if writer then
  result[3] = writer
  result[4] = tonumber(redis.call('HGET', lock, writer))
  result[5] = tonumber(redis.call('HGET', lock, '~token'))
end
for _, reader in ipairs(redis.call('ZRANGEBYSCORE', readers, '(' .. now_ms, '+inf')) do
  local holds = redis.call('HGET', lock, 'r|' .. reader)
  if holds then
    result[#result + 1] = reader
    result[#result + 1] = tonumber(holds)
    result[#result + 1] = tonumber(redis.call('HGET', lock, 't|' .. reader))
  end
end
local deadlines = redis.call('HGETALL', expiry)
for i = 2, #deadlines, 2 do
  -- '~g|' fields are waiters' grant offers, not waiters
  if string.sub(deadlines[i - 1], 1, 3) ~= '~g|' and tonumber(deadlines[i]) > now_ms then
    result[2] = result[2] + 1
  end
end
return result
