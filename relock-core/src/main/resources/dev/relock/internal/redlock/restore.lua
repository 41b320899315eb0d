-- redlock/restore.lua: takes a held Redlock lock back on ONE node that lost it (restarted empty,
-- or its key expired while the node was unreachable). Sent only after a majority of nodes
-- confirmed the hold in the same renewal, so nobody else can hold the lock meanwhile; it restores
-- the lock's redundancy and never counts as a renewal.
--
-- KEYS[1] lock, KEYS[2] fence (see acquire.lua)
-- ARGV[1] owner id, ARGV[2] lease in ms, ARGV[3] the hold's fencing token
-- Returns 1 if the lock was free here and is the owner's now, 0 if it was not free.
local lock, fence = KEYS[1], KEYS[2]
local owner, lease, token = ARGV[1], tonumber(ARGV[2]), ARGV[3]

if redis.call('EXISTS', lock) == 1 then
  return 0
end
redis.call('HSET', lock, '~writer', owner, '~token', token, owner, '1')
redis.call('PEXPIRE', lock, lease)
if tonumber(redis.call('GET', fence) or '0') < tonumber(token) then
  redis.call('SET', fence, token, 'PX', 86400000)
end
return 1
