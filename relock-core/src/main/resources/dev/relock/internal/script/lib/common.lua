-- lib/common.lua: functions every script family shares, single-server and Redlock; put in every script
-- with a line "uses common.lua" where that line stands (LuaScript does this once, at load). Not run
-- on its own.
-- uses token.lua
--
-- The keys of a lock named N (LockKeys builds them), all in the hash tag {N}. Each suffix means
-- the same on one Redis as on every Redlock node; queue.lua and redlock/acquire.lua list what
-- only their engine keeps in them. A script of either family over one lock takes all five as
-- KEYS[1] lock, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] readers (see LuaScript).
--   <prefix>:{N}          hash  '~writer' -> the write holder's owner id, '~token' -> its fencing
--                               token, <owner> -> its holds; 'r|'<owner> -> a reader's holds,
--                               't|'<owner> -> that reader's token; PTTL >= the longest lease
--   <prefix>:{N}:fence    string: the last (highest) fencing token handed out (kept 24 h)
--   <prefix>:{N}:readers  zset  reading owner -> server time in ms when its read lease ends
--   <prefix>:{N}:queue    zset  waiting member -> when its wait began, server time in us; the
--                               lowest waits longest
--   <prefix>:{N}:expiry   hash  waiting member -> server time in ms until which it counts as
--                               waiting (each of its attempts moves it on; a crashed waiter's
--                               entry lapses); fields starting '~g|' are the hand-over to a
--                               waiter, never waiters: a grant offer (queue.lua) or the turn
--                               (redlock/acquire.lua)
-- A member is <owner> for a writer, 'r|'<owner> for a reader.

local function is_reader(member)
  return string.sub(member, 1, 2) == 'r|'
end

local function owner_of(member)
  if is_reader(member) then return string.sub(member, 3) end
  return member
end

-- Raises the fence to token (decimal text) if it is lower: a token settled elsewhere (Redlock's
-- majority) is known here, so this server hands out a larger one next.
local function raise_fence(fence, token)
  if tonumber(redis.call('GET', fence) or '0') < tonumber(token) then
    redis.call('SET', fence, token, 'PX', 86400000)
  end
end

-- Keeps key alive for at least ms more, and paired (if given) with it, where key holds only entries
-- with deadlines of their own (queue, expiry, a condition's wait set): such a key may outlive them,
-- never die before them. Never less than 10 ms: PEXPIRE deletes the key at once when the expiry it
-- computed has passed by its next reading of the clock (Redis 6.2 at least), which a TTL of 1 ms
-- often does and 10 ms only where the server stalls that long inside one command (seen once at a
-- load of 17 on 2 cores); the entries the script just wrote are then gone, so a script reads what
-- it answers from such a key before it calls this.
local function keep_alive(ms, key, paired)
  ms = math.max(ms, 10)
  if redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
    if paired then redis.call('PEXPIRE', paired, ms) end
  end
end

-- Keeps the lock's keys alive for at least ms more.
local function extend(lock, readers, ms)
  if redis.call('PTTL', lock) < ms then redis.call('PEXPIRE', lock, ms) end
  if redis.call('PTTL', readers) < ms and redis.call('EXISTS', readers) == 1 then
    redis.call('PEXPIRE', readers, ms)
  end
end

-- For a lock no writer holds: its keys expire when the last reader's lease ends (they may live
-- longer than that, from a longer lease that was given up early: a read hold released after a
-- delay must not leave its fields behind until the lease it had).
local function expire_with_readers(lock, readers, now_ms)
  local last = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2]
  if last then
    local ms = math.max(1, tonumber(last) - now_ms)
    redis.call('PEXPIRE', lock, ms)
    redis.call('PEXPIRE', readers, ms)
  end
end

-- Drops the readers whose lease has ended, with their fields ('a|', the attempt id, is a Redlock
-- node's only, 'g|', a grant's mark, one server's; 'c|' marks a hold given up with a delay); returns
-- how many live readers are left.
local function live_readers(lock, readers, now_ms)
  -- one command when nobody reads, the usual case
  if redis.call('ZCARD', readers) == 0 then return 0 end
  local ended = redis.call('ZRANGEBYSCORE', readers, '-inf', now_ms)
  for _, owner in ipairs(ended) do
    redis.call('ZREM', readers, owner)
    redis.call('HDEL', lock, 'r|' .. owner, 't|' .. owner, 'a|' .. owner, 'g|' .. owner, 'c|' .. owner)
  end
  return redis.call('ZCARD', readers)
end
