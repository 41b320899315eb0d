-- redlock/release.lua: gives up a Redlock lock on ONE node (sent to every node).
--
-- KEYS[1] lock (see acquire.lua)
-- ARGV[1] owner id ('' with ARGV[3] = '1')
-- ARGV[2] the channel on which releases are announced
-- ARGV[3] '1' to delete the lock whoever holds it (an operator's forced unlock), else '0'
-- Deletes the lock if the owner holds it here (or if forced and anyone does) and publishes the
-- lock key on the channel, so waiting clients try again. Returns 1 if deleted, 0 if not.
local lock = KEYS[1]
local owner, channel, force = ARGV[1], ARGV[2], ARGV[3] == '1'

local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
if not ok or not writer or (writer ~= owner and not force) then
  return 0
end
redis.call('DEL', lock)
redis.call('PUBLISH', channel, lock)
return 1
