-- redlock/renew.lua: extends the leases of many Redlock holds on ONE node (the renewer's batch,
-- or one hold whose re-entry asked for a longer lease). A hold stays held while a majority of
-- nodes answer 1; the client counts the answers of all nodes.
--
-- For hold i (1-based):
--   KEYS[i]  its lock hash (see acquire.lua)
--   ARGV[2i - 1] owner id, ARGV[2i] lease in ms
-- Returns a list with, for each hold:
--    1 the owner holds it here and its lease is now at least the lease asked for;
--    0 nobody holds it here (lease ran out, key deleted, node restarted empty);
--   -1 another owner holds it here (or the key holds another type).
-- It never takes a free node back: that is restore.lua's job, and only once a majority said 1.
local renewed = {}
for i = 1, #KEYS do
  local lock, owner, lease = KEYS[i], ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  -- guarded: a key of another type is a hold not renewed here, not a failed batch
  local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
  if ok and writer == owner then
    if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
    renewed[i] = 1
  elseif ok and not writer and redis.call('EXISTS', lock) == 0 then
    renewed[i] = 0
  else
    renewed[i] = -1
  end
end
return renewed
