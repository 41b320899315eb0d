-- inspect.lua: one consistent look at a lock, for operators' tools. Reads only.
--
-- KEYS[1] lock    hash: owner -> hold count, '~token' -> fencing token (see acquire.lua)
-- KEYS[2] expiry  hash of waiter deadlines (see queue.lua)
-- Returns {pttl, token, live_waiters, owner1, holds1, owner2, holds2, ...}
--   pttl: the lease left in ms; -2 when the lock is not held, -1 when it has no expiry
--   token: the holder's fencing token, 0 when not held
--   live_waiters: queue entries whose deadline has not passed
local lock, expiry = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local result = {redis.call('PTTL', lock), 0, 0}
local fields = redis.call('HGETALL', lock)
for i = 1, #fields, 2 do
  if fields[i] == '~token' then
    result[2] = tonumber(fields[i + 1])
  else
    result[#result + 1] = fields[i]
    result[#result + 1] = tonumber(fields[i + 1])
  end
end
local deadlines = redis.call('HGETALL', expiry)
for i = 2, #deadlines, 2 do
  if tonumber(deadlines[i]) > now_ms then result[3] = result[3] + 1 end
end
return result
