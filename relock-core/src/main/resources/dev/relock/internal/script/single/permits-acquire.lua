-- single/permits-acquire.lua: take n permits of a semaphore for one holder, or join its FIFO queue.
-- uses queue.lua
--
-- KEYS[1] sem, KEYS[2] fence, KEYS[3] queue, KEYS[4] expiry, KEYS[5] leases (see queue.lua)
-- ARGV[1] holder id (new for every acquisition)
-- ARGV[2] lease in ms (> 0)
-- ARGV[3] how much longer the caller will wait, in ms; '0' = try once, do not queue
-- ARGV[4] handoff grace in ms
-- ARGV[5] wake-up route (see queue.lua)
-- ARGV[6] n, the number of permits (> 0), or 'all' for every permit free now (a drain: with
--         ARGV[3] '0', and taken only when there is at least one)
-- (no hold count, unlike acquire.lua: permits are never re-entered)
-- Returns {1, token, available, n}  acquired n permits; available = permits left
--         {0, retry_ms}          not acquired; try again after retry_ms unless woken before
--         {-3}                   the semaphore has no number of permits set
--         {-4, limit}            n is more than the semaphore will ever have
local sem, fence, queue, expiry, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local holder = ARGV[1]
local lease = tonumber(ARGV[2])
local wait = tonumber(ARGV[3])
local grace = tonumber(ARGV[4])
local route = ARGV[5]
local drain = ARGV[6] == 'all'
local n = tonumber(ARGV[6])

local limit = redis.call('HGET', sem, '~limit')
if not limit then return {-3} end
limit = tonumber(limit)
if not drain and n > limit then return {-4, limit} end

local now_ms, now_us = server_time()
local used = live_permits(sem, leases, now_ms)
local held = redis.call('HGET', sem, holder)
if held then
  -- this acquisition's own earlier run (re-sent after a reconnect, or its reply lost): it holds its
  -- permits already, and taking them again would count them twice
  redis.call('ZADD', leases, now_ms + lease, holder)
  return {1, next_token(fence, now_us), limit - used, tonumber(held)}
end
if drain then
  -- every permit free now; none (0 or less: taken away while held) is no acquisition
  n = limit - used
  wait = 0
end
local head, dropped = live_head(queue, expiry, now_ms)
if n > 0 and used + n <= limit and (head == nil or head == holder) then
  redis.call('HINCRBY', sem, holder, n)
  redis.call('HINCRBY', sem, '~used', n)
  -- no TTL on leases: it must outlive every holder listed in the (persistent) semaphore hash
  redis.call('ZADD', leases, now_ms + lease, holder)
  local token = next_token(fence, now_us)
  if head then
    redis.call('ZREM', queue, holder)
    redis.call('HDEL', expiry, holder)
  end
  if used + n < limit then
    -- permits are left: the next waiter may fit too
    hand_off(sem, queue, expiry, now_ms, grace, route, false)
  end
  return {1, token, limit - used - n, n}
end

if dropped and used < limit then
  hand_off(sem, queue, expiry, now_ms, grace, route, false)
end
local retry
local first_end = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
if used + n > limit and first_end then
  retry = tonumber(first_end) - now_ms
elseif head then
  retry = tonumber(redis.call('HGET', expiry, head) or '0') - now_ms
else
  retry = lease
end
if retry < 1 then retry = 1 end
if wait > 0 then
  enqueue(queue, expiry, holder, now_ms, now_us, wait, retry, grace)
end
return {0, retry}
