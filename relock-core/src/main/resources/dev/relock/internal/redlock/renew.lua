-- redlock/renew.lua: extends the leases of many Redlock holds on ONE node (the renewer's batch,
-- or one hold whose re-entry asked for a longer lease). A hold stays held while a majority of
-- nodes answer 1.
--
-- For hold i (1-based):
--   KEYS[2i - 1] its lock hash, KEYS[2i] its fence (see acquire.lua)
--   ARGV[3i - 2] owner id, ARGV[3i - 1] lease in ms, ARGV[3i] the hold's fencing token
-- Returns a list with, for each hold:
--   1 the owner holds it here and its lease is now at least the lease asked for;
--   2 it was free here (the node lost it, e.g. restarted empty) and is the owner's again, with its
--     token; it does not count as renewed, it only restores the lock's redundancy;
--   0 another owner holds it here (or the key holds another type).
local renewed = {}
for i = 1, #KEYS / 2 do
  local lock, fence = KEYS[2 * i - 1], KEYS[2 * i]
  local owner, lease, token = ARGV[3 * i - 2], tonumber(ARGV[3 * i - 1]), ARGV[3 * i]
  renewed[i] = 0
  -- guarded: a key of another type is a hold not renewed here, not a failed batch
  local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
  if ok and writer == owner then
    if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
    renewed[i] = 1
  elseif ok and not writer and redis.call('EXISTS', lock) == 0 then
    redis.call('HSET', lock, '~writer', owner, '~token', token, owner, '1')
    redis.call('PEXPIRE', lock, lease)
    local fence_ok, known = pcall(redis.call, 'GET', fence)
    if fence_ok and tonumber(known or '0') < tonumber(token) then
      redis.call('SET', fence, token, 'PX', 86400000)
    end
    renewed[i] = 2
  end
end
return renewed
