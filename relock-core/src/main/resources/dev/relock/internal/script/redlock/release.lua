-- redlock/release.lua: gives up one owner's write or read hold of a Redlock lock on ONE node
-- (sent to every node; also the clean-up of an attempt that did not end in a hold).
-- uses common.lua
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see acquire.lua)
-- ARGV[1] member: the owner id for its write hold, 'r|'<owner id> for its read hold ('' when forced)
-- ARGV[2] the channel on which releases are announced
-- ARGV[3] '1' to delete the lock whoever holds it (an operator's forced unlock), else '0'
-- ARGV[4] '1' when a writer stops waiting: its mark that keeps new readers out, its place in the
--         queue and its turn go too (a failed attempt of a writer that goes on waiting sends '0'
--         and keeps them)
-- ARGV[5] how long a turn lasts, in ms
-- ARGV[6] the id of the attempt whose hold goes (a release names the attempt that took the hold;
--         the clean-up of an attempt that did not win, that attempt): the hold is removed only if
--         no later attempt of the owner got a 1 (or a grant) here, so a release or clean-up that
--         reaches this node late, or runs again after a reconnect, leaves a later hold of the same
--         owner alone; '-' to remove no hold; '' to remove it whichever attempt took it
-- ARGV[7], ARGV[8], ARGV[9] with ARGV[6] and ARGV[4] = '0' (a writer that goes on waiting): how
--         long it has waited in microseconds, its mark in ms, and its place or '' (acquire.lua's
--         ARGV[4], ARGV[3] and ARGV[7]); its place (ARGV[9], or this node's time minus ARGV[7]) and
--         mark, which taking the lock here had removed, are put back before the turn passes, so the
--         turn goes to the writer that has waited longest, whichever of them split the nodes
-- ARGV[10] with those, '1' when another owner holds a majority: the writer waits for that owner's
--         release, so the turn it is given back here (if any) is not announced (it would try again at
--         once, and lose again, for as long as that owner holds); else '0' or absent
-- Removes the member's hold if it has it here, and a writer's mark, place and turn as a waiting
-- writer (forced: deletes the lock, its readers, the marks and the queue if the lock exists).
-- When the lock is free here afterwards, it passes to the queue's first writer that still waits
-- (its mark has not ended): as a grant on release when its offer is fresh (it tried at most
-- min(ARGV[5], its lease / 3) ago, and this node has its fence: see grant), else as the turn,
-- which keeps everybody else out here until it took the lock or the turn ended. Then, or when a
-- writer stopped waiting and no writer holds the lock here, publishes on the channel the lock key
-- followed by the owner id whose turn it is, or by '<owner id> <fencing token> <attempt id>' for a
-- grant (nothing after the key's closing '}' when it is nobody's), so waiting clients try again,
-- or take their grant. Returns 1 if a hold was removed, 0 if not.
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, channel, grace, attempt = ARGV[1], ARGV[2], tonumber(ARGV[5]), ARGV[6]

-- Whether the hold here, whose attempt id is in the lock hash's field, is not the named attempt's to
-- remove: a later attempt took it, or the id names no attempt at all (the client's '-').
local function kept_from(field)
  if attempt == '' then return false end
  local named = tonumber(attempt)
  return not named or tonumber(redis.call('HGET', lock, field) or '0') > named
end

-- Makes the waiting writer the holder here, as its latest refused attempt would have been had it
-- run now, if its offer (acquire.lua) is fresh and the lock is free here; returns the grant's
-- announcement, '<owner id> <token> <attempt id>', or nil. The lease ends at <attempt's server
-- time> + <lease>, where its client counts it from when it sent that attempt: never later than
-- here. The token is max(fence + 1, the attempt's floor), the same on every node whose fence is
-- below that floor, so a majority of grants usually agrees on it with no write-back; only with the
-- fence key here, so that tokens keep rising on this node (without it, the writer's attempt takes
-- the lock on its turn and draws the token by the clock).
local function grant(writer, now_ms)
  local offer = redis.call('HGET', expiry, '~g|' .. writer)
  if not offer then return nil end
  local tried, lease, id, floor = string.match(offer, '^(%d+) (%d+) (%d+) (%d+)$')
  tried, lease = tonumber(tried), tonumber(lease)
  if not tried or now_ms - tried > math.min(grace, lease / 3) then return nil end
  if redis.call('EXISTS', lock) == 1 then return nil end
  local last = redis.call('GET', fence)
  if not last then return nil end
  local text = string.format('%d', math.max(tonumber(last) + 1, tonumber(floor)))
  redis.call('SET', fence, text, 'PX', 86400000)
  redis.call('HSET', lock, '~writer', writer, '~token', text, writer, '1', '~attempt', id)
  redis.call('PEXPIRE', lock, math.max(1, tried + lease - now_ms))
  redis.call('HDEL', expiry, writer, '~g|' .. writer)
  redis.call('ZREM', queue, writer)
  return writer .. ' ' .. text .. ' ' .. id
end

-- Passes the lock to the first writer in the queue whose mark has not ended, dropping those whose
-- mark has: a grant (see grant), else the turn. Returns what the release announces after the lock
-- key: the grant, the owner id whose turn it is, or '' when nobody waits.
local function pass_turn()
  redis.call('HDEL', expiry, '~g|next', '~g|until')
  if redis.call('EXISTS', queue) == 0 then return '' end
  local now_ms = server_time()
  while true do
    local first = redis.call('ZRANGE', queue, 0, 0)[1]
    if not first then return '' end
    if tonumber(redis.call('HGET', expiry, first) or '0') > now_ms then
      local granted = grant(first, now_ms)
      if granted then return granted end
      redis.call('HSET', expiry, '~g|next', first, '~g|until', now_ms + grace)
      keep_alive(grace, expiry)
      return first
    end
    redis.call('ZREM', queue, first)
    redis.call('HDEL', expiry, first, '~g|' .. first)
  end
end

if ARGV[3] == '1' then
  if redis.call('EXISTS', lock) == 0 then return 0 end
  redis.call('DEL', lock, readers, expiry, queue)
  redis.call('PUBLISH', channel, lock)
  return 1
end
if is_reader(member) then
  local owner = owner_of(member)
  -- guarded: a lock key of another type holds nothing of the member's here (0), it is no failure
  local ok, holds = pcall(redis.call, 'HGET', lock, member)
  if not ok or not holds then return 0 end
  if kept_from('a|' .. owner) then return 0 end
  redis.call('HDEL', lock, member, 't|' .. owner, 'a|' .. owner, 'c|' .. owner)
  redis.call('ZREM', readers, owner)
  -- only a writer waits for readers: tell it once the last one left
  if redis.call('ZCARD', readers) == 0 and redis.call('HEXISTS', lock, '~writer') == 0 then
    redis.call('PUBLISH', channel, lock .. pass_turn())
  end
  return 1
end
-- guarded as for a reader: a lock key of another type is no hold (0); a waiting writer's stop still applies
local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
if ok and writer == member and kept_from('~attempt') then
  -- a later attempt of the same owner holds it here now: only a waiting writer's stop applies
  writer = nil
end
if not ok or writer ~= member then
  if ARGV[4] == '1' then
    -- a writer that gives up waiting lets the readers it kept out, or the next writer, try again
    local unmarked, removed = pcall(redis.call, 'HDEL', expiry, member, '~g|' .. member)
    local left = redis.call('ZREM', queue, member)
    if redis.call('HGET', expiry, '~g|next') == member then
      redis.call('HDEL', expiry, '~g|next', '~g|until')
      redis.call('PUBLISH', channel, lock .. (redis.call('EXISTS', lock) == 0 and pass_turn() or ''))
    elseif ((unmarked and removed > 0) or left == 1)
        and not (ok and redis.call('HEXISTS', lock, '~writer') == 1) then
      -- while a writer holds the lock here, nobody can get in before its release, which announces itself:
      -- an announcement now would only send every waiting writer into an attempt bound to fail
      redis.call('PUBLISH', channel, lock)
    end
  end
  return 0
end
-- the owner's own read hold (a downgrade) stays
redis.call('HDEL', lock, '~writer', '~token', '~attempt', '~cut', member)
redis.call('HDEL', expiry, member, '~g|' .. member)
if attempt ~= '' and ARGV[4] == '0' and tonumber(ARGV[8] or '0') > 0 then
  local now_ms, now_us = server_time()
  local mark = tonumber(ARGV[8])
  redis.call('HSET', expiry, member, now_ms + mark)
  keep_alive(mark, expiry)
  local place = (ARGV[9] or '') ~= '' and ARGV[9] or string.format('%d', now_us - tonumber(ARGV[7]))
  redis.call('ZADD', queue, 'NX', place, member)
  keep_alive(mark, queue)
end
local passed = redis.call('EXISTS', lock) == 0 and pass_turn() or ''
if passed ~= member or ARGV[10] ~= '1' then redis.call('PUBLISH', channel, lock .. passed) end
return 1
