-- single/withdraw.lua: a waiter leaves the queue (it timed out, was interrupted or its client closed),
-- optionally undoing an acquisition whose reply it never saw, and always undoing a grant on release
-- it never took.
-- uses queue.lua
--
-- KEYS[1] lock, KEYS[2] fence (not read here), KEYS[3] queue, KEYS[4] expiry,
-- KEYS[5] readers (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] 'w' for a writer, 'r' for a reader
-- ARGV[3] '1' to also undo the owner's hold when it holds exactly once (an acquire that timed
--         out on the client may still have been applied), else '0'
-- ARGV[4] handoff grace in ms
-- ARGV[5] wake-up route (see queue.lua)
-- ARGV[6] the highest attempt id the owner's client had handed out when it sent this withdraw: a
--         grant on release that answers a later attempt is left alone. A withdraw sent again after a
--         reconnect (Lettuce's default) can run after such a grant, which its client takes.
-- ARGV[7] optional: the fencing token of one grant to the owner that its client will never take (a
--         successor's, see release.lua, whose acquisition ended before the grant's reply came): only
--         that grant is undone, if it is still untaken, and the queue is left alone
-- Returns 1 when a hold was undone, else 0.
-- An acquisition withdraws once it takes no grant for an attempt sent before the withdraw, so a
-- '~granted' write hold or a 'g|'<owner> read hold of the owner for such an attempt is one its
-- client will never use.
local lock, queue, expiry, readers = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]
if ARGV[7] then
  local held = redis.call('HMGET', lock, '~writer', '~granted', '~token')
  if held[1] ~= owner or not held[2] or held[3] ~= ARGV[7] then return 0 end
  redis.call('HDEL', lock, owner, '~writer', '~token', '~granted', '~cut')
  local now_ms = server_time()
  hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[4]), ARGV[5], live_readers(lock, readers, now_ms) > 0)
  return 1
end
local member = owner
if ARGV[2] == 'r' then member = 'r|' .. owner end

local writer = redis.call('HGET', lock, '~writer')
local was_head = redis.call('ZRANGE', queue, 0, 0)[1] == member
drop_entry(queue, expiry, member)
local undone = 0
-- a grant on release that the waiter never took (it gave up first) is undone like a fresh hold; one
-- for an attempt sent after this withdraw, and the hold it made, are not this withdraw's
local granted
if ARGV[2] == 'w' then
  granted = writer == owner and redis.call('HGET', lock, '~granted')
else
  granted = redis.call('HGET', lock, 'g|' .. owner)
end
local later = granted and (tonumber(granted) or 0) > tonumber(ARGV[6])
if not later and (ARGV[3] == '1' or granted) then
  if ARGV[2] == 'w' and writer == owner and redis.call('HGET', lock, owner) == '1' then
    redis.call('HDEL', lock, owner, '~writer', '~token', '~granted', '~cut')
    writer = false
    undone = 1
  elseif ARGV[2] == 'r' and redis.call('HGET', lock, member) == '1' then
    redis.call('HDEL', lock, member, 't|' .. owner, 'g|' .. owner, 'c|' .. owner)
    redis.call('ZREM', readers, owner)
    undone = 1
  end
end
if (undone == 1 or was_head) and not writer then
  local now_ms = server_time()
  hand_off(lock, queue, expiry, now_ms, tonumber(ARGV[4]), ARGV[5],
    live_readers(lock, readers, now_ms) > 0)
end
return undone
