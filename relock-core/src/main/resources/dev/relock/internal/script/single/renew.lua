-- single/renew.lua: extend the leases of many holds in one call (the lease keeper's batch, or one hold's
-- extendLease). A lease is only ever lengthened: one with more left keeps it, so renewals and
-- extensions of one hold may arrive in any order and the lease is the longest any of them asked for.
-- A hold its owner gave up with a delay (release-after.lua marked it) is never lengthened: a renewal
-- sent before that release may reach Redis after it (over another connection), and must leave the
-- lease the release cut.
-- uses queue.lua
--
-- For hold i (1-based), in order:
--   ARGV[3i - 2]  the owner id
--   ARGV[3i - 1]  the lease in ms: the hold is kept at least that long from now
--   ARGV[3i]      'w' for a write hold, 'r' for a read hold, 's' for a semaphore's permits
--   KEYS          its lock hash, then, for 'r' and 's' only, that lock's readers zset (see
--                 queue.lua) or the semaphore's leases zset (then the first is the semaphore hash):
--                 the roles in the order every script takes them (see LuaScript)
-- Only keys a live hold has are declared: while a Cluster slot is being migrated, a node runs a
-- script only if it has every key the script declares, and a write hold has no readers zset.
-- Returns a list with, for each hold: 1 when renewed, 0 when the owner no longer holds it
-- (lease ended, key deleted or flushed, lock forced open), 2 when the owner gave it up with a delay
-- and it is left to end then (the hold's mark, see queue.lua: its owner's client has let it go, so
-- this is no loss). A key of another type counts as lost.
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
    local ok, writer = pcall(redis.call, 'HMGET', lock, '~writer', '~token', '~cut')
    if ok and writer[1] == owner then
      -- marked with this hold's token: a mark left by an earlier hold of the owner names another
      if writer[3] and writer[3] == writer[2] then
        renewed[i] = 2
      else
        -- a writer's own read hold (after a downgrade) is renewed as a hold of its own
        if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
        renewed[i] = 1
      end
    end
  else
    local ok, ends = pcall(redis.call, 'ZSCORE', leases, owner)
    if ok and ends and tonumber(ends) > now_ms then
      -- the hold's count, its mark, and for a reader its token (a semaphore's mark is '1' while it holds)
      local fields = {owner, 'c|' .. owner}
      if kind == 'r' then fields = {'r|' .. owner, 'c|' .. owner, 't|' .. owner} end
      local held_ok, held = pcall(redis.call, 'HMGET', lock, unpack(fields))
      if held_ok and held[1] then
        if held[2] and (kind ~= 'r' or held[2] == held[3]) then
          renewed[i] = 2
        else
          if tonumber(ends) < now_ms + lease then redis.call('ZADD', leases, now_ms + lease, owner) end
          -- a lock's keys live as long as its longest lease; a semaphore's never expire
          if kind == 'r' then extend(lock, leases, lease) end
          renewed[i] = 1
        end
      end
    end
  end
end
return renewed
