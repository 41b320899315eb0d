-- redlock/fence.lua: writes back the fencing token a Redlock acquisition settled on (the maximum
-- of its majority's tokens), so that every later majority contains a node that knows it and
-- hands out a larger one.
--
-- KEYS[1] lock, KEYS[2] fence (see acquire.lua)
-- ARGV[1] owner id, ARGV[2] the token
-- Raises the fence to the token if it is lower, and makes the token the owner's token here if the
-- owner holds the lock on this node. Returns 1.
local lock, fence = KEYS[1], KEYS[2]
local owner, token = ARGV[1], ARGV[2]

if tonumber(redis.call('GET', fence) or '0') < tonumber(token) then
  redis.call('SET', fence, token, 'PX', 86400000)
end
if redis.call('HGET', lock, '~writer') == owner then
  redis.call('HSET', lock, '~token', token)
end
return 1
