-- renew.lua: extend the leases of many holds in one call (the lease keeper's batch).
-- uses queue.lua
--
-- For hold i (1-based):
--   KEYS[2i - 1]  its lock hash; KEYS[2i] that lock's readers zset (see queue.lua)
--   ARGV[3i - 2]  the owner id
--   ARGV[3i - 1]  the new lease in ms
--   ARGV[3i]      'w' for a write hold, 'r' for a read hold, 's' for a semaphore's permits
--                 (then KEYS[2i - 1] is the semaphore hash and KEYS[2i] its leases zset)
-- Returns a list with, for each hold: 1 when renewed, 0 when the owner no longer holds it
-- (lease ended, key deleted or flushed, lock forced open). A key of another type counts as lost.
local now_ms = server_time()
local renewed = {}
for i = 1, #KEYS / 2 do
  local lock, readers = KEYS[2 * i - 1], KEYS[2 * i]
  local owner, lease, kind = ARGV[3 * i - 2], tonumber(ARGV[3 * i - 1]), ARGV[3 * i]
  local ok, result = pcall(function()
    if kind == 'w' then
      if redis.call('HGET', lock, '~writer') ~= owner then return 0 end
    elseif kind == 's' then
      local ends = redis.call('ZSCORE', readers, owner)
      if not ends or tonumber(ends) <= now_ms or redis.call('HEXISTS', lock, owner) == 0 then return 0 end
      -- the semaphore hash and its leases never expire: expired holders are dropped by scripts
      redis.call('ZADD', readers, now_ms + lease, owner)
      return 1
    else
      local ends = redis.call('ZSCORE', readers, owner)
      if not ends or tonumber(ends) <= now_ms or redis.call('HEXISTS', lock, 'r|' .. owner) == 0 then
        return 0
      end
      redis.call('ZADD', readers, now_ms + lease, owner)
    end
    extend(lock, readers, lease)
    return 1
  end)
  if ok then renewed[i] = result else renewed[i] = 0 end
end
return renewed
