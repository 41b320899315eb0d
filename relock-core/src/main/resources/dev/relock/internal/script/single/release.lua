-- single/release.lua: give up one write hold (or all of them) of an owner; when the last goes, the next
-- waiters get their turn: a recently active writer at the head is granted the lock at once, and so
-- are the recently active readers at the head.
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] the write holds the owner keeps (its own count less one, >= 1), written absolute so that a
--         release run twice (re-sent after a reconnect, or applied although its reply was lost) gives up
--         one hold, not two; 'all' to give up every write hold of the owner
-- ARGV[3] handoff grace in ms
-- ARGV[4] wake-up route (see queue.lua)
-- ARGV[5] the fencing token of the hold given up: the owner's hold with another token is a later one
--         (the thread's next acquisition, or a grant on release to it) that this release, sent again
--         after a reconnect and run after that hold was made, must leave alone
-- ARGV[6] optional, '1': the caller delivers a grant on release to an owner of its own client
--         from this reply (see grant_head), so such a grant is not published; the reply is then text
-- ARGV[7] optional, with ARGV[6]: the successor, an owner of the caller's client that waits in its
--         client (in no queue here) behind the caller; made the holder when the last hold goes and
--         nobody waits in the queue nor reads. ARGV[8] its lease in ms, ARGV[9] the id its client
--         gave this hand-over (as an attempt's, see grant_head)
-- Returns the owner's write holds left (0 = released), or -1 when the owner does not hold the
-- write lock with that token: its lease ran out or the lock was deleted or taken over. With ARGV[6]
-- the same as text, and a grant to an owner of the caller's client (the successor included) as
-- '0 <owner> <fencing token> <attempt id>'.
-- uses token.lua
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]
local function reply(holds)
  if ARGV[6] == '1' then return tostring(holds) end
  return holds
end
-- Makes the successor (ARGV[7]) the holder of the lock, which nobody holds now, as a grant (see
-- grant_head: '~granted' until its owner takes it, a withdraw of that owner undoes it); its lease runs
-- from now, and its client counts it from when it sent this release.
local function succeed()
  local successor = ARGV[7]
  local _, now_us = server_time()
  local _, text = next_token(fence, now_us)
  redis.call('HSET', lock, '~writer', successor, successor, 1, '~token', text, '~granted', ARGV[9])
  redis.call('PEXPIRE', lock, ARGV[8])
  return '0 ' .. successor .. ' ' .. text .. ' ' .. ARGV[9]
end

-- the usual case, in 3 calls and before the helpers are defined: the last hold goes, nobody waits
-- and nobody reads, so nothing is handed off and nothing else is left in the lock hash
-- Whether the owner holds the write lock with the token given (one command)
local function holds_it()
  local writer = redis.call('HMGET', lock, '~writer', '~token')
  return writer[1] == owner and writer[2] == ARGV[5]
end
if ARGV[2] == 'all' and redis.call('EXISTS', queue, readers) == 0 then
  if not holds_it() then return reply(-1) end
  redis.call('DEL', lock)
  if ARGV[7] then return succeed() end
  return reply(0)
end

-- uses queue.lua
if not holds_it() then return reply(-1) end
if ARGV[2] ~= 'all' then
  redis.call('HSET', lock, owner, ARGV[2])
  return reply(tonumber(ARGV[2]))
end
redis.call('HDEL', lock, owner, '~writer', '~token', '~granted', '~cut')
local now_ms, now_us = server_time()
local grace = tonumber(ARGV[3])
-- readers left here can only be the owner itself, after a downgrade
local reading = live_readers(lock, readers, now_ms)
if reading == 0 then
  local reply_client = ARGV[6] == '1' and client_of(owner) or nil
  local grant = grant_head(lock, fence, queue, expiry, now_ms, now_us, grace, ARGV[4], reply_client)
  if grant then
    if reply_client and client_of(grant[1]) == reply_client then
      return '0 ' .. grant[1] .. ' ' .. grant[2] .. ' ' .. grant[3]
    end
    return reply(0)
  end
  -- live_head (in grant_head) dropped the dead entries: an empty queue has no key
  if ARGV[7] and redis.call('EXISTS', queue) == 0 then return succeed() end
end
-- the readers at the head that take grants hold at once (grant_readers); the others are woken
hand_off(lock, queue, expiry, now_ms, grace, ARGV[4], reading > 0,
  {fence = fence, readers = readers, now_us = now_us})
return reply(0)
