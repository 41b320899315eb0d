-- single/acquire-read.lua: take the read (shared) lock, re-enter it, or join the queue of waiters.
-- Readers share the lock with each other, never with a writer other than themselves (a writer
-- may take the read lock: downgrade). A new reader waits behind a writer that is already waiting,
-- so writers are not starved; a reader that holds the read lock may always re-enter it.
-- uses token.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] lease in ms (> 0) of this reader
-- ARGV[3] for a re-entry, the read holds the caller has now (its own count, >= 1); '0' for a fresh
--         acquisition. Written absolute, as in acquire.lua: a re-entry makes the count ARGV[3] + 1,
--         a fresh acquisition that finds the owner already reading (its own earlier run) makes it 1.
-- ARGV[4] how much longer the caller will wait, in ms; '0' = try once, do not queue
-- ARGV[5] handoff grace in ms
-- ARGV[6] wake-up route (see queue.lua)
-- ARGV[7] optional: when the caller takes a grant on release ('G' message, see grant_readers in
--         queue.lua), the id of this attempt; absent or '' otherwise. A grant to the owner for a
--         later attempt than this (or for any, without an id) is not this attempt's to take
-- Returns {1, token, holds}  acquired or re-entered (holds = the owner's read holds now)
--         {0, retry_ms}      not acquired; try again after retry_ms unless woken before
--         {-1}               a re-entry, but the owner's read lease has ended: lease lost
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]
local member = 'r|' .. owner
local lease = tonumber(ARGV[2])

-- the usual case, before the other helpers are defined: a fresh reader that holds no read lease here
-- (a grant to it, its earlier run or a hold it released after a delay take the path below, which
-- checks grants), no writer holds the lock and nobody waits (so no writer waits either). Readers whose
-- lease ended are left for the next script that counts readers (they keep nobody out of a read
-- lock). The first command on each key is a read (SET ... GET refuses a fence of the wrong type
-- before it writes), so a key of the wrong type fails before any write.
local writer = redis.call('HGET', lock, '~writer')
if ARGV[3] == '0' and not writer and redis.call('EXISTS', queue) == 0
    and not redis.call('ZSCORE', readers, owner) then
  local now_ms, now_us = server_time()
  local token, text = next_token(fence, now_us)
  redis.call('HSET', lock, member, 1, 't|' .. owner, text)
  redis.call('ZADD', readers, now_ms + lease, owner)
  -- the keys live at least as long as this reader's lease
  if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
  if redis.call('PTTL', readers) < lease then redis.call('PEXPIRE', readers, lease) end
  return {1, token, 1}
end

-- uses queue.lua
local wait = tonumber(ARGV[4])
local grace = tonumber(ARGV[5])
local now_ms, now_us = server_time()
local reading = live_readers(lock, readers, now_ms)
local held = tonumber(ARGV[3])
local holds = redis.call('HGET', lock, member)
local lease_ends = redis.call('ZSCORE', readers, owner)
if holds and lease_ends then
  -- a re-entry; or a fresh attempt that finds a grant on release it crossed, or a read hold of its
  -- owner that the client no longer counts (this attempt's earlier run, a hold released after a
  -- delay, a release whose reply was lost)
  if held == 0 then
    -- as in acquire.lua: a grant answers one attempt (its id in 'g|'<owner>), which an earlier
    -- attempt of the owner, sent again after a reconnect, neither takes nor clears
    local granted = redis.call('HGET', lock, 'g|' .. owner)
    if granted then
      if (tonumber(ARGV[7] or '') or 0) < tonumber(granted) then return {0, 1} end
      redis.call('HDEL', lock, 'g|' .. owner)
    else
      -- a fresh acquisition draws a token of its own, as on the fast path
      local _, text = next_token(fence, now_us)
      redis.call('HSET', lock, 't|' .. owner, text)
    end
  end
  holds = held + 1
  redis.call('HSET', lock, member, holds)
  if tonumber(lease_ends) < now_ms + lease then
    redis.call('ZADD', readers, now_ms + lease, owner)
  end
  extend(lock, readers, lease)
  return {1, tonumber(redis.call('HGET', lock, 't|' .. owner)), holds}
end
if held > 0 then return {-1} end

local head, dropped = live_head(queue, expiry, now_ms)
local blocked
if writer then
  blocked = writer ~= owner
else
  -- may not pass a live writer queued ahead of it (for a newcomer: anywhere in the queue)
  local rank = redis.call('ZRANK', queue, member)
  local ahead = {}
  if rank == false or rank == nil then
    ahead = redis.call('ZRANGE', queue, 0, -1)
  elseif rank > 0 then
    ahead = redis.call('ZRANGE', queue, 0, rank - 1)
  end
  blocked = false
  for _, waiting in ipairs(ahead) do
    if not is_reader(waiting) and tonumber(redis.call('HGET', expiry, waiting) or '0') > now_ms then
      blocked = true
      break
    end
  end
end

if not blocked then
  local token, text = next_token(fence, now_us)
  redis.call('HSET', lock, member, 1, 't|' .. owner, text)
  redis.call('ZADD', readers, now_ms + lease, owner)
  extend(lock, readers, lease)
  drop_entry(queue, expiry, member)
  return {1, token, 1}
end

local offer = nil
if ARGV[7] and ARGV[7] ~= '' then offer = string.format('%d %d %s', now_ms, lease, ARGV[7]) end
return not_acquired(lock, queue, expiry, readers, member, head, dropped, writer, reading,
  now_ms, now_us, lease, wait, grace, ARGV[6], offer)
