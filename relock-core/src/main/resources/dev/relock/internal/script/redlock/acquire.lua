-- redlock/acquire.lua: takes the write (exclusive) side of a Redlock lock on ONE node, if nobody
-- else holds it there, writer or reader. The client sends it to every node at once and holds the
-- lock only when a majority said 1.
-- uses common.lua
--
-- State on each node: the keys of common.lua (so shared/inspect.lua reads it too), with
--   lock    hash  <owner> -> 1 and 'r|'<owner> -> 1 (re-entries are counted in the client, never
--                 here); '~attempt' -> the id of the writer's latest attempt that got a 1 here,
--                 'a|'<owner> -> a reader's latest such attempt id; '~cut' -> the writer's '~attempt'
--                 when it gave its hold up with a delay, 'c|'<owner> -> a reader's 'a|' then
--                 (release-after.lua): a hold so marked is never lengthened (renew.lua), and the
--                 owner's next attempt, with a later id, holds unmarked
--   fence   string: also raised to the tokens this node is told of (fence.lua, restore.lua)
--   expiry  hash  only writers wait: its deadline is the writer's mark, which keeps new readers
--                 out (writer preference) and gives it turns; '~g|next' -> the waiting writer whose
--                 turn it is after a release (release.lua), '~g|until' -> when that turn ends;
--                 '~g|'<owner> -> '<server ms> <lease ms> <attempt id> <token floor>', the grant
--                 offer of a waiting writer's latest refused attempt: when it ran here, the lease
--                 it asked for, its id, and the least token it could have been given here (its
--                 proposal, or this node's time when that did not count), for a grant on release
--   queue   zset  only writers wait: the place, when its wait began (ARGV[7], or this node's
--                 time when it queued the writer minus ARGV[4]), orders the turns
--
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (the order of every
--         script over one lock, see LuaScript)
-- ARGV[1] owner id, ARGV[2] lease in ms
-- ARGV[3] when refused, keep new readers out for this many ms and keep a place in the queue ('0':
--         a single try, no mark, no place)
-- ARGV[4] how long its wait has lasted, in microseconds of its client's monotonic clock: each node
--         dates the wait's beginning by its own clock, so no client's wall clock orders the queue (one
--         running behind would otherwise take every turn); nodes whose clocks agree order it alike
-- ARGV[5] this attempt's id (unique in its client): the clean-up of an attempt that did not win
--         names it, so a clean-up that reaches a node late never undoes a later attempt's hold
-- ARGV[6] the token this attempt proposes: the same on every node (its client's clock in
--         microseconds, a little ahead)
-- ARGV[7] the writer's place, the same on every node: the median of the places the nodes gave its
--         first refused attempt (each node's own time minus ARGV[4] differs by the network's delays,
--         so two writers that began within them could stand in different orders on different nodes,
--         each given the turn on some, neither on a majority: for ever); '' before that, and then
--         this node dates it (time minus ARGV[4]). An earlier place here is kept until ARGV[7] comes.
-- Returns {1, token} when the owner holds the write lock here now: freshly taken with a new token,
--   or already its own (its lease is made at least ARGV[2] and its token kept);
--   {0, pttl, holder, place} when another owner holds it (pttl: the lock's lease left in ms, -1 without
--   expiry; holder: the writer's owner id, '~readers' when readers hold it, '' for a key relock
--   did not make), or when the lock is free here but it is another waiting writer's turn (pttl:
--   the ms left of that turn; holder: that writer's owner id); place: the owner's place in the
--   queue here (a string), or '' when it takes none (ARGV[3] '0').
-- A refused writer that takes a place leaves its grant offer too (see expiry above): a release that
-- frees the lock here while it heads the queue may make it the holder at once (release.lua).
-- A turn that ends untaken is gone, and so is that writer's place: its next attempt, if it still
-- waits, queues it again at the place its wait began.
-- A fresh token is max(fence + 1, ARGV[6], server time in us): it keeps rising on this node, also
-- after the node lost its fence key (restart without persistence, 24 h unused), and nodes whose
-- fences are below the proposal all hand out the proposal itself, so that when a majority agrees
-- the client needs no write-back round (see RedlockAcquisition). A proposal more than 1 s ahead
-- of this node's clock counts as 0: nodes then hand out their own counters or times, which
-- differ, and the client writes the largest back. So no node hands out a token more than 1 s
-- ahead of its own clock, and a node that restarted empty after being down longer than that
-- hands out more than any token it handed out before (if its clock did not step back). See
-- next_token in common.lua.
local lock, fence, queue, expiry, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, lease, mark, waited = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

local writer = redis.call('HGET', lock, '~writer')
if writer == owner then
  if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
  -- ids only grow: an older attempt that arrives late must not claim a later one's hold
  if tonumber(ARGV[5]) > tonumber(redis.call('HGET', lock, '~attempt') or '0') then
    redis.call('HSET', lock, '~attempt', ARGV[5])
  end
  return {1, tonumber(redis.call('HGET', lock, '~token'))}
end
local now_ms, now_us = server_time()
local holder
-- readers whose lease ended here are gone; a live one keeps the writer out
if not writer and live_readers(lock, readers, now_ms) > 0 then holder = '~readers' end
local pttl
if not holder and (writer or redis.call('EXISTS', lock) == 1) then
  holder = writer or ''
end
if holder then
  pttl = redis.call('PTTL', lock)
else
  local turn = redis.call('HGET', expiry, '~g|next')
  if turn and turn ~= owner then
    local left = tonumber(redis.call('HGET', expiry, '~g|until') or '0') - now_ms
    if left > 0 then
      holder, pttl = turn, left
    else
      redis.call('HDEL', expiry, '~g|next', '~g|until', '~g|' .. turn)
      redis.call('ZREM', queue, turn)
    end
  end
end
if holder then
  local place = ''
  if mark > 0 then
    local proposal = tonumber(ARGV[6])
    local floor = (proposal > now_us and proposal <= now_us + 1000000) and proposal or now_us
    redis.call('HSET', expiry, owner, now_ms + mark, '~g|' .. owner,
      string.format('%d %d %s %d', now_ms, lease, ARGV[5], floor))
    keep_alive(mark, expiry)
    if ARGV[7] ~= '' then
      redis.call('ZADD', queue, ARGV[7], owner)
    else
      redis.call('ZADD', queue, 'NX', string.format('%d', now_us - waited), owner)
    end
    -- read before the key's time to live is set: a PEXPIRE can delete what it is given at once (see keep_alive)
    place = redis.call('ZSCORE', queue, owner)
    keep_alive(mark, queue)
  end
  return {0, pttl, holder, place}
end
redis.call('HDEL', expiry, owner, '~g|' .. owner, '~g|next', '~g|until')
redis.call('ZREM', queue, owner)

-- a proposal more than 1 s ahead of this node's clock is not taken (a client whose clock runs ahead)
local token, text = next_token(fence, now_us, tonumber(ARGV[6]))
redis.call('HSET', lock, '~writer', owner, '~token', text, owner, '1', '~attempt', ARGV[5])
redis.call('PEXPIRE', lock, lease)
return {1, token}
