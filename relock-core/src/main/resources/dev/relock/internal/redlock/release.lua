-- redlock/release.lua: gives up one owner's write or read hold of a Redlock lock on ONE node
-- (sent to every node; also the clean-up of an attempt that did not end in a hold).
--
-- KEYS[1] lock, KEYS[2] readers, KEYS[3] waiting (see acquire.lua)
-- ARGV[1] member: the owner id for its write hold, 'r|'<owner id> for its read hold ('' when forced)
-- ARGV[2] the channel on which releases are announced
-- ARGV[3] '1' to delete the lock whoever holds it (an operator's forced unlock), else '0'
-- ARGV[4] '1' when a writer stops waiting: its mark that keeps new readers out goes too (a
--         failed attempt of a writer that goes on waiting sends '0' and keeps it)
-- Removes the member's hold if it has it here, and a writer's mark as a waiting writer (forced:
-- deletes the lock, its readers and the marks if the lock exists) and, when the lock is free here
-- afterwards or a writer left or stopped waiting, publishes the lock key on the channel, so
-- waiting clients try again. Returns 1 if a hold was removed, 0 if not.
local lock, readers, waiting = KEYS[1], KEYS[2], KEYS[3]
local member, channel = ARGV[1], ARGV[2]

if ARGV[3] == '1' then
  if redis.call('EXISTS', lock) == 0 then return 0 end
  redis.call('DEL', lock, readers, waiting)
  redis.call('PUBLISH', channel, lock)
  return 1
end
if string.sub(member, 1, 2) == 'r|' then
  local owner = string.sub(member, 3)
  local ok, holds = pcall(redis.call, 'HGET', lock, member)
  if not ok or not holds then return 0 end
  redis.call('HDEL', lock, member, 't|' .. owner)
  redis.call('ZREM', readers, owner)
  -- only a writer waits for readers: tell it once the last one left
  if redis.call('ZCARD', readers) == 0 and redis.call('HEXISTS', lock, '~writer') == 0 then
    redis.call('PUBLISH', channel, lock)
  end
  return 1
end
local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
if not ok or writer ~= member then
  if ARGV[4] == '1' then
    -- a writer that gives up waiting lets the readers it kept out try again
    local unmarked, removed = pcall(redis.call, 'HDEL', waiting, member)
    if unmarked and removed == 1 then redis.call('PUBLISH', channel, lock) end
  end
  return 0
end
-- the owner's own read hold (a downgrade) stays
redis.call('HDEL', lock, '~writer', '~token', member)
redis.call('HDEL', waiting, member)
redis.call('PUBLISH', channel, lock)
return 1
