-- redlock/acquire.lua: takes a Redlock lock on ONE node, if it is free there. The client sends it
-- to every node at once and holds the lock only when a majority said 1.
--
-- State on each node (the standalone write lock's layout, so inspect.lua reads it too):
--   lock   hash  '~writer' -> owner id, '~token' -> the fencing token, <owner> -> 1
--                (re-entries are counted in the client, never here); PTTL = the lease
--   fence  string: the highest fencing token this node handed out or was told of (kept 24 h)
--
-- KEYS[1] lock, KEYS[2] fence
-- ARGV[1] owner id, ARGV[2] lease in ms
-- Returns {1, token} when the owner holds the lock here now: freshly taken with a new token, or
--   already its own (its lease is set again and its token kept);
--   {0, pttl, holder} when another owner holds it (pttl: its lease left in ms, -1 without expiry;
--   holder: its owner id, '' for a key relock did not make).
-- A fresh token is max(fence + 1, server time in us): it keeps rising on this node even after the
-- node lost its fence key (restart without persistence, 24 h unused).
local lock, fence = KEYS[1], KEYS[2]
local owner, lease = ARGV[1], tonumber(ARGV[2])

local writer = redis.call('HGET', lock, '~writer')
if writer == owner then
  redis.call('PEXPIRE', lock, lease)
  return {1, tonumber(redis.call('HGET', lock, '~token'))}
end
if writer or redis.call('EXISTS', lock) == 1 then
  return {0, redis.call('PTTL', lock), writer or ''}
end

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local token = math.max(tonumber(redis.call('GET', fence) or '0') + 1, now_us)
local text = string.format('%d', token)
redis.call('SET', fence, text, 'PX', 86400000)
redis.call('HSET', lock, '~writer', owner, '~token', text, owner, '1')
redis.call('PEXPIRE', lock, lease)
return {1, token}
