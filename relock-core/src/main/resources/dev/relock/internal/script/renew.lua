-- renew.lua: extend the leases of many held locks in one call (the lease keeper's batch).
--
-- KEYS[i]       lock hash i: owner -> hold count (see acquire.lua)
-- ARGV[2i - 1]  owner id that should hold KEYS[i]
-- ARGV[2i]      new lease for KEYS[i] in ms
-- Returns a list with, for each i: 1 when renewed, 0 when the owner no longer holds KEYS[i]
-- (expired, deleted or taken over: the lease is lost). A key of another type counts as lost.
local renewed = {}
for i = 1, #KEYS do
  local ok, held = pcall(redis.call, 'HEXISTS', KEYS[i], ARGV[2 * i - 1])
  if ok and held == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
