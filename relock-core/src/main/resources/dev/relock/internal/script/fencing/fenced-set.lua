-- fencing/fenced-set.lua: SET a value only for a fencing token not older than the last one that wrote it.
--
-- KEYS[1]  the resource: a key written with SET (its TTL, if any, is cleared)
-- KEYS[2]  the resource's token key: the last fencing token that wrote KEYS[1], in decimal, no TTL
--          (same hash tag as KEYS[1], so both live in one Cluster slot)
-- ARGV[1]  the value to write
-- ARGV[2]  the writer's fencing token: a non-negative integer in decimal without leading zeros
-- Returns {1, ARGV[2]} when written: no token recorded yet, or ARGV[2] >= the recorded one (equal
-- is the same hold writing again); {0, recorded token} when ARGV[2] is older, nothing changed.
-- Tokens are compared as decimal text, length first, so every 64-bit value compares exactly
-- (Lua numbers are doubles and would round tokens above 2^53).
local token = ARGV[2]
local last = redis.call('GET', KEYS[2])
if last then
  if not string.match(last, '^%d+$') then
    return redis.error_reply('fencing token key ' .. KEYS[2] .. ' holds ' .. last .. ', not a token')
  end
  if #token < #last or (#token == #last and token < last) then
    return {0, last}
  end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], token)
return {1, token}
