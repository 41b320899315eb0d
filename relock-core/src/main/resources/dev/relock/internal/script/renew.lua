-- renew.lua: extend the leases of many holds in one call (the lease keeper's batch, or one hold's
-- extendLease). A lease is only ever lengthened: one with more left keeps it, so renewals and
-- extensions of one hold may arrive in any order and the lease is the longest any of them asked for.
-- uses queue.lua
--
-- For hold i (1-based), in order:
--   ARGV[3i - 2]  the owner id
--   ARGV[3i - 1]  the lease in ms: the hold is kept at least that long from now
--   ARGV[3i]      'w' for a write hold, 'r' for a read hold, 's' for a semaphore's permits
--   KEYS          its lock hash, then, for 'r' and 's' only, that lock's readers zset (see
--                 queue.lua) or the semaphore's leases zset (then the first is the semaphore hash)
-- Only keys a live hold has are declared: while a Cluster slot is being migrated, a node runs a
-- script only if it has every key the script declares, and a write hold has no readers zset.
-- Returns a list with, for each hold: 1 when renewed, 0 when the owner no longer holds it
-- (lease ended, key deleted or flushed, lock forced open). A key of another type counts as lost.
local now_ms = server_time()
local renewed = {}
local k = 1
for i = 1, #ARGV / 3 do
  local owner, lease, kind = ARGV[3 * i - 2], tonumber(ARGV[3 * i - 1]), ARGV[3 * i]
  local lock, leases = KEYS[k], nil
  k = k + 1
  if kind ~= 'w' then
    leases = KEYS[k]
    k = k + 1
  end
  renewed[i] = 0
  -- the first read is guarded: a key of another type means the hold is gone, not a failed batch;
  -- after it the key is known to be a hash and nothing below can fail
  if kind == 'w' then
    local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
    if ok and writer == owner then
      -- a writer's own read hold (after a downgrade) is renewed as a hold of its own
      if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
      renewed[i] = 1
    end
  else
    local ok, ends = pcall(redis.call, 'ZSCORE', leases, owner)
    if ok and ends and tonumber(ends) > now_ms then
      local field = owner
      if kind == 'r' then field = 'r|' .. owner end
      local held_ok, held = pcall(redis.call, 'HEXISTS', lock, field)
      if held_ok and held == 1 then
        if tonumber(ends) < now_ms + lease then redis.call('ZADD', leases, now_ms + lease, owner) end
        -- a lock's keys live as long as its longest lease; a semaphore's never expire
        if kind == 'r' then extend(lock, leases, lease) end
        renewed[i] = 1
      end
    end
  end
end
return renewed
