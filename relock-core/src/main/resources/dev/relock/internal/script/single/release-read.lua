-- single/release-read.lua: give up one read hold (or all of them) of an owner; when the last reader
-- leaves a lock no writer holds, the next waiters get their turn: a recently active writer at the
-- head is granted the lock at once (see grant_head in queue.lua), as by a write release, and so are
-- recently active readers there.
-- uses token.lua
--
-- KEYS[1] lock, KEYS[2] fence (for a grant's token), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] readers (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] the read holds the owner keeps (its own count less one, >= 1), written absolute as in
--         release.lua; 'all' to give up every read hold of the owner
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up route (see queue.lua)
-- ARGV[5] the fencing token of the hold given up: as in release.lua, the owner's read hold with
--         another token is a later one (a grant on release to its next attempt, say) that this
--         release, sent again after a reconnect and run after that hold was made, must leave alone
-- Returns the owner's read holds left (0 = released), or -1 when the owner holds no read lock with
-- that token: its lease ran out or the lock was deleted.
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]

local held = redis.call('HMGET', lock, 'r|' .. owner, 't|' .. owner)
local holds = held[2] == ARGV[5] and held[1]
-- the usual case, before the other helpers are defined: the owner's live last read hold goes, nobody
-- waits (so nobody is handed the lock) and no reader's lease has ended (so none is to be dropped);
-- anything else takes the path below
if ARGV[2] == 'all' and holds and redis.call('EXISTS', queue) == 0 then
  local ends = redis.call('ZSCORE', readers, owner)
  local now = server_time()
  -- the two leases that end first: none has ended when the first has not, and the owner is the one
  -- reader when there is no second
  local first = redis.call('ZRANGE', readers, 0, 1, 'WITHSCORES')
  if ends and tonumber(ends) > now and tonumber(first[2]) > now then
    if not first[3] and redis.call('HEXISTS', lock, '~writer') == 0 then
      -- the one reader of a lock no writer holds: nothing else is in its keys
      redis.call('DEL', lock, readers)
    else
      redis.call('HDEL', lock, 'r|' .. owner, 't|' .. owner, 'g|' .. owner, 'c|' .. owner)
      redis.call('ZREM', readers, owner)
    end
    return 0
  end
end

-- uses queue.lua
local now_ms, now_us = server_time()
local reading = live_readers(lock, readers, now_ms)
if not holds or not redis.call('ZSCORE', readers, owner) then return -1 end
if ARGV[2] ~= 'all' then
  redis.call('HSET', lock, 'r|' .. owner, ARGV[2])
  return tonumber(ARGV[2])
end
redis.call('HDEL', lock, 'r|' .. owner, 't|' .. owner, 'g|' .. owner, 'c|' .. owner)
redis.call('ZREM', readers, owner)
if reading == 1 and redis.call('HEXISTS', lock, '~writer') == 0 then
  local grace = tonumber(ARGV[3])
  if not grant_head(lock, fence, queue, expiry, now_ms, now_us, grace, ARGV[4], nil) then
    hand_off(lock, queue, expiry, now_ms, grace, ARGV[4], false,
      {fence = fence, readers = readers, now_us = now_us})
  end
end
return 0
