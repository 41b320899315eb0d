-- common.lua: functions every script family shares, single-server and Redlock; prepended to every
-- script with a line "uses common.lua" (LuaScript does this once, at load). Not run on its own.

-- The server's clock in ms and in us; the only clock the scripts trust.
local function server_time()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

