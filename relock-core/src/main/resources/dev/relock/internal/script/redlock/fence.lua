-- redlock/fence.lua: writes back the fencing token a Redlock acquisition settled on (the maximum
-- of its majority's tokens), so that every later majority contains a node that knows it and
-- hands out a larger one.
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see acquire.lua;
--         only the first two are read here)
-- ARGV[1] member: the owner id for a write hold, 'r|'<owner id> for a read hold
-- ARGV[2] the token
-- ARGV[3] the id of the attempt that took the hold (acquire.lua's ARGV[5], or the attempt a grant on
--         release answered): a hold a later attempt of the member took keeps its own token
-- Raises the fence to the token if it is lower, and makes the token the member's token here if
-- it holds the lock on this node by that attempt (or an earlier one). Returns 1.
local lock, fence = KEYS[1], KEYS[2]
local member, token, attempt = ARGV[1], ARGV[2], tonumber(ARGV[3])

raise_fence(fence, token)
if is_reader(member) then
  local owner = owner_of(member)
  if redis.call('HEXISTS', lock, member) == 1
      and tonumber(redis.call('HGET', lock, 'a|' .. owner) or '0') <= attempt then
    redis.call('HSET', lock, 't|' .. owner, token)
  end
elseif redis.call('HGET', lock, '~writer') == member
    and tonumber(redis.call('HGET', lock, '~attempt') or '0') <= attempt then
  redis.call('HSET', lock, '~token', token)
end
return 1
