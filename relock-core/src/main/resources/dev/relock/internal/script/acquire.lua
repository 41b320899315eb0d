-- acquire.lua: take an exclusive lock, re-enter it, or join the queue of its waiters.
-- uses queue.lua
--
-- KEYS[1] lock    hash: owner -> hold count, and '~token' -> the holder's fencing token;
--                 PEXPIRE = the lease
-- KEYS[2] fence   string: the last fencing token handed out for this name (kept 24 h)
-- KEYS[3] queue   zset of waiters (see queue.lua)
-- KEYS[4] expiry  hash of waiter deadlines (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] lease in ms (> 0)
-- ARGV[3] '1' when the caller already holds the lock and this is a re-entry, else '0'
-- ARGV[4] how much longer the caller will wait, in ms; '0' = try once, do not queue
-- ARGV[5] handoff grace in ms
-- ARGV[6] wake-up channel prefix
-- Returns {1, token, holds}  acquired (or re-entered; holds = the owner's hold count now)
--         {0, retry_ms}      not acquired; try again after retry_ms unless woken before
--         {-1}               ARGV[3] was '1' but the owner no longer holds the lock: lease lost
-- Fencing tokens: max(last + 1, server time in us), so they keep rising even after the fence
-- key is lost (restart without persistence, failover, 24 h without use).
local lock, fence, queue, expiry = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner = ARGV[1]
local lease = tonumber(ARGV[2])
local wait = tonumber(ARGV[4])
local grace = tonumber(ARGV[5])

-- the first command on each key is a read, so a key of the wrong type fails before any write
local holds = redis.call('HGET', lock, owner)
if holds then
  holds = redis.call('HINCRBY', lock, owner, 1)
  if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
  return {1, tonumber(redis.call('HGET', lock, '~token')), holds}
end
if ARGV[3] == '1' then return {-1} end

local now_ms, now_us = server_time()
local held = redis.call('EXISTS', lock) == 1
local head, dropped = live_head(queue, expiry, now_ms)

if not held and (head == nil or head == owner) then
  local token = math.max(tonumber(redis.call('GET', fence) or '0') + 1, now_us)
  local token_text = string.format('%d', token)
  redis.call('SET', fence, token_text, 'PX', 86400000)
  redis.call('HSET', lock, owner, 1, '~token', token_text)
  redis.call('PEXPIRE', lock, lease)
  if head then
    redis.call('ZREM', queue, owner)
    redis.call('HDEL', expiry, owner)
  end
  return {1, token, 1}
end

local retry
if held then
  retry = redis.call('PTTL', lock)
  if retry < 0 then retry = lease end
else
  if dropped then
    -- the dead heads are gone and the lock is free: the new head gets its turn now
    hand_off(lock, queue, expiry, now_ms, grace, ARGV[6])
  end
  retry = tonumber(redis.call('HGET', expiry, head)) - now_ms
end
if retry < 1 then retry = 1 end

if wait > 0 then
  if not redis.call('ZSCORE', queue, owner) then
    redis.call('ZADD', queue, now_us, owner)
  end
  -- the caller tries again after retry ms at the latest (sooner if woken), or gives up at wait
  local ttl = math.min(wait, retry) + grace
  redis.call('HSET', expiry, owner, now_ms + ttl)
  if redis.call('PTTL', queue) < ttl then
    redis.call('PEXPIRE', queue, ttl)
    redis.call('PEXPIRE', expiry, ttl)
  end
end
return {0, retry}
