-- redlock/renew.lua: extends the leases of many Redlock holds on ONE node (the renewer's batch,
-- or one hold whose re-entry asked for a longer lease). A hold stays held while a majority of
-- nodes answer 1; the client counts the answers of all nodes.
-- uses common.lua
--
-- For hold i (1-based), its keys in the roles' order of every script (see LuaScript), only two:
--   KEYS[2i - 1] its lock hash, KEYS[2i] the lock's readers (see acquire.lua)
--   ARGV[2i - 1] member: the owner id for a write hold, 'r|'<owner id> for a read hold
--   ARGV[2i] lease in ms
-- Returns a list with, for each hold:
--    1 the member holds it here and its lease is now at least the lease asked for;
--    2 the member holds it here, but gave it up with a delay (release-after.lua marked it): its lease
--      is left as that call cut it (the client counts this as no confirmation);
--    0 it does not, and nothing here keeps it from holding it (lease ran out, key deleted, node
--      restarted empty);
--   -1 another owner holds it here in a way that excludes the member (or a key of another type).
-- It never takes a free node back: that is restore.lua's job, and only once a majority said 1.
local now_ms = server_time()
local renewed = {}
for i = 1, #ARGV / 2 do
  local lock, readers = KEYS[2 * i - 1], KEYS[2 * i]
  local member, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  -- guarded: a key of another type is a hold not renewed here, not a failed batch
  local ok, writer = pcall(redis.call, 'HGET', lock, '~writer')
  if not ok then
    renewed[i] = -1
  elseif is_reader(member) then
    local owner = owner_of(member)
    local ends = tonumber(redis.call('ZSCORE', readers, owner) or '0')
    local held = redis.call('HMGET', lock, member, 'c|' .. owner, 'a|' .. owner)
    if ends > now_ms and held[1] and held[2] == (held[3] or '0') then
      renewed[i] = 2
    elseif ends > now_ms and held[1] then
      if ends < now_ms + lease then redis.call('ZADD', readers, now_ms + lease, owner) end
      extend(lock, readers, lease)
      renewed[i] = 1
    elseif writer and writer ~= owner then
      renewed[i] = -1
    else
      renewed[i] = 0
    end
  elseif writer == member then
    local marks = redis.call('HMGET', lock, '~cut', '~attempt')
    if marks[1] == (marks[2] or '0') then
      renewed[i] = 2
    else
      if redis.call('PTTL', lock) < lease then redis.call('PEXPIRE', lock, lease) end
      renewed[i] = 1
    end
  elseif not writer and redis.call('EXISTS', lock) == 0 then
    renewed[i] = 0
  else
    renewed[i] = -1
  end
end
return renewed
