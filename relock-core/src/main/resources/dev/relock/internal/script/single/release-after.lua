-- single/release-after.lua: an owner gives up its last hold, but the hold stays taken until a delay from
-- now and then frees itself (its lease is set to the delay; the client no longer renews it). The
-- waiter at the head of the queue is told to try again when the delay is over. The hold is marked
-- as given up ('~cut', 'c|'<owner>, see queue.lua), so that no renewal or extension sent before this
-- call, which may reach Redis after it over another connection, lengthens the lease it cut
-- (renew.lua); the owner's next fresh acquisition takes the hold anew, unmarked.
-- uses queue.lua
--
-- KEYS[1] lock (a semaphore's hash for 's'), KEYS[2] fence (not read here), KEYS[3] queue,
-- KEYS[4] expiry, KEYS[5] readers (a semaphore's leases for 's') (see queue.lua)
-- ARGV[1] owner id
-- ARGV[2] 'w' for a write hold, 'r' for a read hold, 's' for a semaphore's permits
-- ARGV[3] the delay in ms (> 0)
-- ARGV[4] wake-up route (see queue.lua)
-- ARGV[5] for 'w' and 'r', the fencing token of the hold given up: as in release.lua, an owner's hold
--         with another token is a later one, which this call (sent again after a reconnect) leaves alone
-- Returns 0 when the hold now ends after the delay (and is marked), -1 when the owner held nothing:
-- its lease ran out or the lock was deleted or forced open.
local lock, queue, expiry, leases = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local owner, kind, delay = ARGV[1], ARGV[2], tonumber(ARGV[3])

local now_ms = server_time()
if kind == 'w' then
  local writer = redis.call('HMGET', lock, '~writer', '~token')
  if writer[1] ~= owner or writer[2] ~= ARGV[5] then return -1 end
  redis.call('PEXPIRE', lock, delay)
  redis.call('HSET', lock, '~cut', ARGV[5])
  -- taken (a grant it was stays marked until its release): a withdraw of the owner's next acquisition
  -- must not undo it as an untaken grant
  redis.call('HDEL', lock, '~granted')
elseif kind == 'r' then
  local held = redis.call('HMGET', lock, 'r|' .. owner, 't|' .. owner)
  if not held[1] or held[2] ~= ARGV[5] then return -1 end
  live_readers(lock, leases, now_ms)
  if not redis.call('ZSCORE', leases, owner) then return -1 end
  redis.call('ZADD', leases, now_ms + delay, owner)
  redis.call('HSET', lock, 'c|' .. owner, ARGV[5])
  -- taken: a withdraw of the owner's next acquisition must not undo it as an untaken grant
  redis.call('HDEL', lock, 'g|' .. owner)
  if redis.call('HEXISTS', lock, '~writer') == 1 then
    -- the owner also writes (a downgrade): the write lease keeps the keys
    extend(lock, leases, delay)
  else
    expire_with_readers(lock, leases, now_ms)
  end
else
  -- read only as a type guard: a semaphore key of another type fails (WRONGTYPE) before any write
  redis.call('HGET', lock, '~limit')
  live_permits(lock, leases, now_ms)
  if not redis.call('HGET', lock, owner) then return -1 end
  redis.call('ZADD', leases, now_ms + delay, owner)
  -- a holder id is new with every acquisition, so the mark needs no token
  redis.call('HSET', lock, 'c|' .. owner, '1')
end

local head = live_head(queue, expiry, now_ms)
if head then
  wake_up(ARGV[4], head, 'S\n' .. lock .. '\n' .. owner_of(head) .. '\n' .. (delay + 1))
end
return 0
