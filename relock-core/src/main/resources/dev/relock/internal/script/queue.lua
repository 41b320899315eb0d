-- queue.lua: the FIFO queue of waiters that every exclusive-lock script shares.
-- Not run on its own: ScriptSource prepends it to the scripts whose header says "uses queue.lua".
--
-- A lock's queue is two keys in the lock's hash tag:
--   queue  (zset) waiting owner -> arrival time in microseconds of server time; lowest waits longest
--   expiry (hash) waiting owner -> server time in ms after which the entry counts as dead
-- A live waiter refreshes its expiry on every attempt; a crashed one is dropped once it expires.
-- Wake-ups are published to '<channel prefix><client id>', the owning client's own channel, as
--   'H\n<lock key>\n<owner>'            your turn: try now
--   'S\n<lock key>\n<owner>\n<ms>'      you are next: try within <ms> if nobody took the lock

-- The server's clock as {ms, us}; the only clock the scripts trust.
local function server_time()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

-- An owner is '<client id>:<thread or handle id>'; client ids are hex and never contain ':'.
local function client_of(owner)
  return string.match(owner, '^[^:]+')
end

-- Drops dead entries from the head of the queue. Returns the live head (or nil) and whether any
-- entry was dropped.
local function live_head(queue, expiry, now_ms)
  local dropped = false
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then return nil, dropped end
    local deadline = tonumber(redis.call('HGET', expiry, head) or '0')
    if deadline > now_ms then return head, dropped end
    redis.call('ZREM', queue, head)
    redis.call('HDEL', expiry, head)
    dropped = true
  end
end

-- Called when the lock at lock_key has just become free. The live head gets grace_ms to take it
-- (its entry expires then, so a dead head holds up the queue for at most grace_ms), is woken, and
-- the waiter behind it is told to check after grace_ms in case the head never comes.
local function hand_off(lock_key, queue, expiry, now_ms, grace_ms, channel_prefix)
  local head = live_head(queue, expiry, now_ms)
  if not head then return end
  redis.call('HSET', expiry, head, now_ms + grace_ms)
  redis.call('PUBLISH', channel_prefix .. client_of(head), 'H\n' .. lock_key .. '\n' .. head)
  local next = redis.call('ZRANGE', queue, 1, 1)[1]
  if next then
    redis.call('PUBLISH', channel_prefix .. client_of(next),
      'S\n' .. lock_key .. '\n' .. next .. '\n' .. grace_ms)
  end
end

