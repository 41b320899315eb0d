-- lib/token.lua: the server's clock and fencing tokens, all an uncontended acquisition needs; put in
-- every script with a line "uses token.lua" where that line stands (LuaScript does this once, at
-- load), before the fast path of the scripts that have one: the other helpers are defined on every
-- run of a script, which costs the fast path about a microsecond of the server's time. Not run on
-- its own. The keys are common.lua's.

-- The server's clock in ms and in us; the only clock the scripts trust.
local function server_time()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

-- Fencing tokens: max(last + 1, server time in us, proposal), so they keep rising even after the
-- fence key is lost (restart without persistence, failover, 24 h without use). A proposal (a
-- Redlock client's, optional) counts only when at most 1 s ahead of the server's clock, so no
-- server hands out a token more than 1 s ahead of its own clock. Returns the token as a number
-- and as the decimal text the scripts store.
-- One SET ... GET in the usual case (the clock has moved on since the last token); a second SET
-- only when tokens come faster than the clock's microseconds or the clock went back.
local function next_token(fence, now_us, proposal)
  local floor = now_us
  if proposal and proposal > floor and proposal <= now_us + 1000000 then floor = proposal end
  local text = string.format('%d', floor)
  local last = tonumber(redis.call('SET', fence, text, 'PX', 86400000, 'GET') or '0')
  if last < floor then return floor, text end
  text = string.format('%d', last + 1)
  redis.call('SET', fence, text, 'PX', 86400000)
  return last + 1, text
end
