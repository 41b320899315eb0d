-- single/latch.lua: a count-down latch (RelockCountDownLatch): arm it, count it down, wait for it, inspect it.
-- uses queue.lua
--
-- KEYS[1] latch  hash <prefix>:{N}:latch (LockKeys.latchKey), in the name's slot:
--   'count'  -> the count left; 0 once it reached zero (kept until the key expires, so a waiter
--               that missed its wake-up still finds that its round opened)
--   'round'  -> which arming this is: the server's time in us when trySetCount armed it
--   'set'    -> the id of the trySetCount call that armed it (the same call sent again finds itself)
--   'idle'   -> ms the key lives after each arming or count-down (the expiry of forgotten latches)
--   'opened' -> the rounds that reached zero, the last 16, space-separated: kept across armings while the
--               key lives, so a waiter of an earlier round tells an opened round from one that expired
--               (a latch that expired starts again without them)
--   'd|'<id> -> server time in ms when the countDown call <id> counted, or found the latch open (sent
--               again, also after the next arming, it counts no more)
--   'w|'<client id> -> 1: that client has threads waiting; it gets one wake-up when the count hits 0
-- PTTL: 'idle' after the last arming or count-down. No key reads as count 0 (never set, or expired).
-- The wake-up at zero goes along the route (queue.lua): 'O\n<latch key>\n<client id>\n<round>' to every
-- waiting client's channel, or once to the latch's shard channel with sharded pub/sub.
--
-- ARGV[1] 'set'  ARGV[2] count (> 0), ARGV[3] idle ms, ARGV[4] call id, ARGV[5] ms for which the ids
--                of an earlier round's count-downs are kept (a count-down sent again after a reconnect
--                reaches Redis within it). Returns 1 when this call armed it, 0 when the count was > 0.
--         'down' ARGV[2] call id, ARGV[3] wake-up route. Returns the count left.
--         'wait' ARGV[2] client id. Returns {count, round, pttl, opened}; while the count is > 0 the client
--                is listed as waiting. {0, '', -2, ''} when there is no latch.
--         'info' Returns {count, round, pttl, the ids of the waiting clients...}; {0, '', -2} when
--                there is no latch.
local key, op = KEYS[1], ARGV[1]
local count = tonumber(redis.call('HGET', key, 'count') or '0')

if op == 'set' then
  if redis.call('HGET', key, 'set') == ARGV[4] then return 1 end
  if count > 0 then return 0 end
  local now_ms, now_us = server_time()
  local keep_after = now_ms - tonumber(ARGV[5])
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    local kind = string.sub(fields[i], 1, 2)
    if kind == 'w|' or (kind == 'd|' and tonumber(fields[i + 1]) < keep_after) then
      redis.call('HDEL', key, fields[i])
    end
  end
  redis.call('HSET', key, 'count', ARGV[2], 'round', string.format('%d', now_us), 'set', ARGV[4],
    'idle', ARGV[3])
  redis.call('PEXPIRE', key, ARGV[3])
  return 1
end

if op == 'down' then
  local id = 'd|' .. ARGV[2]
  if redis.call('HEXISTS', key, id) == 1 then return count end
  if count == 0 then
    -- an opened latch keeps the id too, so the same call sent again after the next arming counts nothing;
    -- up to 1,000 fields, so count-downs of an open latch in a loop cannot grow it without bound
    if redis.call('EXISTS', key) == 1 and redis.call('HLEN', key) < 1000 then
      redis.call('HSET', key, id, string.format('%d', server_time()))
    end
    return 0
  end
  count = count - 1
  local now_ms = server_time()
  redis.call('HSET', key, 'count', string.format('%d', count), id, string.format('%d', now_ms))
  redis.call('PEXPIRE', key, redis.call('HGET', key, 'idle'))
  if count == 0 then
    local round = redis.call('HGET', key, 'round')
    local opened = round
    local earlier = redis.call('HGET', key, 'opened')
    if earlier then
      local kept = {}
      for past in string.gmatch(earlier, '%S+') do kept[#kept + 1] = past end
      for i = 1, math.min(#kept, 15) do opened = opened .. ' ' .. kept[i] end
    end
    redis.call('HSET', key, 'opened', opened)
    local route = ARGV[3]
    local sharded = string.find(route, '{', 1, true)
    local told = false
    for _, field in ipairs(redis.call('HKEYS', key)) do
      if string.sub(field, 1, 2) == 'w|' then
        local client = string.sub(field, 3)
        if not (sharded and told) then
          wake_up(route, client .. ':latch', 'O\n' .. key .. '\n' .. client .. '\n' .. round)
          told = true
        end
        redis.call('HDEL', key, field)
      end
    end
  end
  return count
end

local pttl = redis.call('PTTL', key)
if op == 'wait' then
  if pttl == -2 then return {0, '', -2, ''} end
  if count > 0 then redis.call('HSET', key, 'w|' .. ARGV[2], 1) end
  return {count, redis.call('HGET', key, 'round') or '', pttl, redis.call('HGET', key, 'opened') or ''}
end
if pttl == -2 then return {0, '', -2} end
local reply = {count, redis.call('HGET', key, 'round') or '', pttl}
for _, field in ipairs(redis.call('HKEYS', key)) do
  if string.sub(field, 1, 2) == 'w|' then reply[#reply + 1] = string.sub(field, 3) end
end
return reply
