-- redlock/release-after.lua: gives up one owner's write or read hold of a Redlock lock on ONE
-- node, but the hold stays taken there until a delay from now and then frees itself (its lease
-- is set to the delay; the client no longer renews it). Nothing is announced: waiters find the
-- lock free by its lease, as for a holder that went away. The hold is marked as given up ('~cut',
-- 'c|'<owner>, see acquire.lua), so that no renewal that reaches the node after this call lengthens
-- the lease it cut (renew.lua).
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see
--         acquire.lua)
-- ARGV[1] member: the owner id for its write hold, 'r|'<owner id> for its read hold
-- ARGV[2] the delay in ms (> 0)
-- ARGV[3] the id of the attempt that took the hold (see release.lua's ARGV[6]): a hold a later
--         attempt of the same owner took is left alone
-- Returns 1 when the member's hold here now ends after the delay, 0 when it held nothing here.
local lock, queue, expiry, readers = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local member, delay = ARGV[1], tonumber(ARGV[2])

-- guarded: a lock key of another type holds nothing of the member's here (0), it is no failure
local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
if not ok then return 0 end
-- a writer that holds the lock waits nowhere: its place and mark left on a node that refused it go
if not is_reader(member) then
  redis.call('HDEL', expiry, member, '~g|' .. member)
  redis.call('ZREM', queue, member)
  if redis.call('HGET', expiry, '~g|next') == member then redis.call('HDEL', expiry, '~g|next', '~g|until') end
end
if is_reader(member) then
  local owner = owner_of(member)
  local attempt = redis.call('HGET', lock, 'a|' .. owner) or '0'
  if redis.call('HEXISTS', lock, member) == 0 or not redis.call('ZSCORE', readers, owner)
      or tonumber(attempt) > tonumber(ARGV[3]) then
    return 0
  end
  local now_ms = server_time()
  redis.call('ZADD', readers, now_ms + delay, owner)
  redis.call('HSET', lock, 'c|' .. owner, attempt)
  if writer then
    -- the owner also writes (a downgrade): the write lease keeps the keys
    extend(lock, readers, delay)
  else
    expire_with_readers(lock, readers, now_ms)
  end
  return 1
end
local attempt = redis.call('HGET', lock, '~attempt') or '0'
if writer ~= member or tonumber(attempt) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', lock, '~cut', attempt)
if redis.call('ZCARD', readers) == 0 then
  redis.call('PEXPIRE', lock, delay)
elseif redis.call('PTTL', lock) < delay then
  -- the owner also reads (a downgrade): the key lives as long as the longer of the two
  redis.call('PEXPIRE', lock, delay)
end
return 1
