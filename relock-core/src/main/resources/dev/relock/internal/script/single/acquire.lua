-- single/acquire.lua: take the write (exclusive) lock, re-enter it, or join the queue of waiters.
-- The exclusive lock of RelockClient.lock(N) is the write half of readWriteLock(N).
-- uses token.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] lease in ms (> 0)
-- ARGV[3] for a re-entry, the write holds the caller has now (its own count, >= 1); '0' for a fresh
--         acquisition. Counts are written absolute, never incremented, so that a script run twice
--         (re-sent after a reconnect, or applied although its reply was lost) leaves what one run does:
--         a re-entry makes the owner's count ARGV[3] + 1, a fresh acquisition that finds the owner
--         already holding (its earlier run, or a grant it crossed) makes it 1.
-- ARGV[4] how much longer the caller will wait, in ms; '0' = try once, do not queue
-- ARGV[5] handoff grace in ms
-- ARGV[6] wake-up route (see queue.lua)
-- ARGV[7] optional: when the caller takes a grant on release ('G' message, see grant_head), the
--         id of this attempt; absent or '' otherwise. A grant to the owner for a later attempt than
--         this (or for any, without an id) is not this attempt's to take
-- Returns {1, token, holds}  acquired or re-entered (holds = the owner's write holds now)
--         {0, retry_ms}      not acquired; try again after retry_ms unless woken before
--         {-1}               a re-entry, but the owner no longer holds it: lease lost
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]

-- the usual case, in 5 calls and before the other helpers are defined: nobody holds, reads or
-- waits (none of these keys exists, so none has a wrong type; SET ... GET refuses a fence key of
-- the wrong type before writing anything)
if ARGV[3] == '0' and redis.call('EXISTS', lock, queue, readers) == 0 then
  local _, now_us = server_time()
  local token, text = next_token(fence, now_us)
  redis.call('HSET', lock, '~writer', owner, owner, 1, '~token', text)
  redis.call('PEXPIRE', lock, ARGV[2])
  return {1, token, 1}
end

-- uses queue.lua
local lease = tonumber(ARGV[2])
local held = tonumber(ARGV[3])
local wait = tonumber(ARGV[4])
local grace = tonumber(ARGV[5])

-- the first command on each key is a read, so a key of the wrong type fails before any write
local writer = redis.call('HGET', lock, '~writer')
if writer == owner then
  -- a re-entry; or a fresh attempt that finds a grant on release it crossed (taken by this attempt,
  -- its lease counted from now), or its own earlier run: held once, as the caller will count it
  if held == 0 then
    -- a grant answers one attempt (its id in '~granted'): an earlier attempt of the owner, sent again
    -- after a reconnect and run after the grant, neither takes it nor clears that mark, which a
    -- withdraw sent before the attempt the grant answers reads to leave it alone (withdraw.lua);
    -- nobody waits for this reply any more. An attempt without an id is such an earlier one too
    local granted = redis.call('HGET', lock, '~granted')
    local answers = granted and tonumber(granted)
    if answers and (tonumber(ARGV[7] or '') or 0) < answers then return {0, 1} end
    -- the owner's hold given up with a delay (its mark, '~cut') is taken anew: renewed from here on
    redis.call('HDEL', lock, '~granted', '~cut')
  end
  redis.call('HSET', lock, owner, held + 1)
  extend(lock, readers, lease)
  return {1, tonumber(redis.call('HGET', lock, '~token')), held + 1}
end
if held > 0 then return {-1} end

local now_ms, now_us = server_time()
local reading = live_readers(lock, readers, now_ms)
-- only a live reader can hold the read lock (live_readers dropped the others). The client refuses an
-- upgrade itself before it sends anything, so a read hold of this owner here is one its client gave up
-- although Redis kept it (the release failed or its reply was lost): nobody reads under it, it goes
if reading > 0 and redis.call('HEXISTS', lock, 'r|' .. owner) == 1 then
  redis.call('HDEL', lock, 'r|' .. owner, 't|' .. owner, 'g|' .. owner, 'c|' .. owner)
  redis.call('ZREM', readers, owner)
  reading = reading - 1
end
local head, dropped = live_head(queue, expiry, now_ms)

if not writer and reading == 0 and (head == nil or head == owner) then
  local token, text = next_token(fence, now_us)
  redis.call('HSET', lock, '~writer', owner, owner, 1, '~token', text)
  redis.call('PEXPIRE', lock, lease)
  if head then
    drop_entry(queue, expiry, owner)
  end
  return {1, token, 1}
end

local offer = nil
if ARGV[7] and ARGV[7] ~= '' then offer = string.format('%d %d %s', now_ms, lease, ARGV[7]) end
return not_acquired(lock, queue, expiry, readers, owner, head, dropped, writer, reading,
  now_ms, now_us, lease, wait, grace, ARGV[6], offer)
