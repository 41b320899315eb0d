-- single/condition.lua: the wait set of a condition of a write lock (RelockCondition): join it, stay in it,
-- leave it, signal its waiters, list them.
-- uses queue.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see queue.lua), then
-- KEYS[6] waiting  zset  <prefix>:{N}:cond:<condition>: waiting owner -> when it joined, server time
--                        in us; the lowest waits longest (signal takes them in this order)
-- KEYS[7] live     hash  <prefix>:{N}:cond:<condition>:live: waiting owner -> '<ms> <await id>': the
--                        server time in ms until which it counts as waiting (its thread stays in it by
--                        'stay' within that time, so the entry of a waiter whose client died lapses and
--                        signal skips it) and the id its client gave that await; '~signal' -> the id of
--                        the last signal call (the same call sent again after a reconnect signals nobody);
--                        's|'<owner> -> '<await id> <ms>': that await was signalled then (so a 'leave' whose
--                        first reply was lost still learns it was signalled; dropped at the owner's next
--                        join, or by a signal 10 minutes later)
-- Both keys live as long as their longest entry.
-- A signalled waiter leaves the wait set and joins the lock's queue (queue.lua) behind everyone queued
-- already, with the time the lock may still be held plus the handoff grace to come for it, and gets
-- 'W\n<lock key>\n<owner>\n<await id>' along the route: its thread then acquires the lock as any waiter
-- does. The await id keeps a late message from ending a later await of the same thread.
--
-- ARGV[1] 'join'   ARGV[2] owner, ARGV[3] ms it counts as waiting, ARGV[4] await id. Only the writer may
--                  join. Returns 1, or -1 when the owner does not hold the write lock (lease lost).
--         'stay'   ARGV[2] owner, ARGV[3] ms, ARGV[4] await id. Returns 1 while in the wait set, 0 once
--                  signalled (or lapsed).
--         'leave'  ARGV[2] owner, ARGV[3] await id. Takes that await's entry out of the wait set. Returns 0
--                  if that await was signalled, 1 if not (it left now, or before, or its entry lapsed);
--                  an entry of another await of the owner is left alone.
--         'signal' ARGV[2] owner (the writer), ARGV[3] how many to signal ('all' for every one),
--                  ARGV[4] handoff grace in ms, ARGV[5] wake-up route, ARGV[6] the call's id. Returns how
--                  many it signalled, or -1 when the owner does not hold the write lock. An entry of the
--                  signaller itself (it holds the lock, so it waits for nothing) is dropped, not signalled.
--         'list'   Returns the live waiting owners, longest waiting first.
local lock, fence, queue, expiry, readers, waiting, live = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  KEYS[6], KEYS[7]
local op = ARGV[1]
local now_ms, now_us = server_time()

-- The live waiters in joining order, at most limit of them (nil: all); drops the lapsed ones it passes.
local function live_waiters(limit)
  local found, ids = {}, {}
  for _, member in ipairs(redis.call('ZRANGE', waiting, 0, -1)) do
    if limit and #found >= limit then break end
    local entry = redis.call('HGET', live, member) or '0'
    if tonumber(string.match(entry, '^%d+')) > now_ms then
      found[#found + 1] = member
      ids[#ids + 1] = string.match(entry, ' (.*)$') or ''
    else
      redis.call('ZREM', waiting, member)
      redis.call('HDEL', live, member)
    end
  end
  return found, ids
end

if op == 'join' or op == 'stay' then
  local owner, ms = ARGV[2], tonumber(ARGV[3])
  if op == 'join' then
    if redis.call('HGET', lock, '~writer') ~= owner then return -1 end
    redis.call('ZADD', waiting, 'NX', now_us, owner)
    redis.call('HDEL', live, 's|' .. owner)
  elseif not redis.call('ZSCORE', waiting, owner) then
    return 0
  end
  redis.call('HSET', live, owner, string.format('%d', now_ms + ms) .. ' ' .. ARGV[4])
  keep_alive(ms, waiting, live)
  return 1
end

if op == 'leave' then
  local owner, id = ARGV[2], ARGV[3]
  local entry = redis.call('HGET', live, owner)
  if entry and (string.match(entry, ' (.*)$') or '') == id and redis.call('ZSCORE', waiting, owner) then
    redis.call('HDEL', live, owner)
    redis.call('ZREM', waiting, owner)
    return 1
  end
  local signalled = redis.call('HGET', live, 's|' .. owner)
  if signalled and string.match(signalled, '^(%S+)') == id then return 0 end
  return 1
end

if op == 'list' then
  return (live_waiters())
end

-- signal
local owner = ARGV[2]
if redis.call('HGET', lock, '~writer') ~= owner then return -1 end
if redis.call('HGET', live, '~signal') == ARGV[6] then return 0 end
-- the holder waits for nothing: an entry of its own is left over from an await whose leave failed
if redis.call('ZREM', waiting, owner) == 1 then redis.call('HDEL', live, owner) end
local waiters, ids = live_waiters(ARGV[3] ~= 'all' and tonumber(ARGV[3]) or nil)
local count = #waiters
if count == 0 then return 0 end
redis.call('HSET', live, '~signal', ARGV[6])
-- the marks of signals old enough that no 'leave' of theirs can still come
local fields = redis.call('HGETALL', live)
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 's|'
      and tonumber(string.match(fields[i + 1], ' (%d+)$') or '0') < now_ms - 600000 then
    redis.call('HDEL', live, fields[i])
  end
end
-- each comes for the lock once its holder, the signaller, lets it go: within the lock's lease
local ttl = math.max(1, redis.call('PTTL', lock)) + tonumber(ARGV[4])
local last = tonumber(redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2] or '0')
for i = 1, count do
  local member = waiters[i]
  redis.call('ZREM', waiting, member)
  redis.call('HDEL', live, member)
  redis.call('HSET', live, 's|' .. member, ids[i] .. ' ' .. string.format('%d', now_ms))
  -- behind every waiter queued already, in the wait set's order
  last = math.max(last + 1, now_us)
  redis.call('ZADD', queue, 'NX', last, member)
  redis.call('HSET', expiry, member, now_ms + ttl)
  wake_up(ARGV[5], member, 'W\n' .. lock .. '\n' .. member .. '\n' .. ids[i])
end
keep_alive(ttl, queue, expiry)
return count
