-- redlock/restore.lua: takes a held Redlock lock back on ONE node that lost it (restarted empty,
-- or its key expired while the node was unreachable). Sent only after a majority of nodes
-- confirmed the hold in the same renewal, so nobody can hold the lock against it meanwhile (a
-- majority of writers, or of readers against a writer); it restores the lock's redundancy and
-- never counts as a renewal.
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry (neither read here), KEYS[5] readers (see
--         acquire.lua)
-- ARGV[1] member: the owner id for a write hold, 'r|'<owner id> for a read hold
-- ARGV[2] lease in ms, ARGV[3] the hold's fencing token, ARGV[4] the id of the attempt that took the
--         hold (acquire.lua's ARGV[5]): the clean-up after a loss names it, and removes the hold here too
-- Returns 1 if the hold is the member's here now, 0 if the node was not free for it.
local lock, fence, readers = KEYS[1], KEYS[2], KEYS[5]
local member, lease, token, attempt = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

if is_reader(member) then
  local owner = owner_of(member)
  local writer = redis.call('HGET', lock, '~writer')
  if (writer and writer ~= owner) or (not writer and redis.call('EXISTS', lock) == 1
      and redis.call('ZCARD', readers) == 0) then
    return 0
  end
  local now_ms = server_time()
  redis.call('HSET', lock, member, '1', 't|' .. owner, token, 'a|' .. owner, attempt)
  redis.call('ZADD', readers, now_ms + lease, owner)
  extend(lock, readers, lease)
else
  if redis.call('EXISTS', lock) == 1 then
    return 0
  end
  redis.call('HSET', lock, '~writer', member, '~token', token, member, '1', '~attempt', attempt)
  redis.call('PEXPIRE', lock, lease)
end
raise_fence(fence, token)
return 1
