-- lib/queue.lua: the single-server lock's layout and the functions its scripts share (the FIFO queue,
-- wake-ups, grants on release); prepended to every script whose header says "uses queue.lua"
-- (LuaScript does this once, at load). Not run on its own.
-- uses common.lua
--
-- The keys of a lock are common.lua's. A script on one lock takes all five, in this order
-- (LockKeys.all(): one array per lock, the order of every family, see LuaScript), whether it
-- reads them all or not; only renew.lua, with its many holds, takes just the keys each hold has:
--   lock     hash  as in common.lua; <owner> -> the writer's hold count, 'r|'<owner> -> a
--                  reader's hold count (re-entries are counted here too); '~granted' -> the
--                  id of the attempt that a grant on release to the writer answers, while its
--                  client may not have seen the grant yet (see grant_head); 'g|'<owner> -> the
--                  same for a grant to a reader (see grant_readers), while that reader holds;
--                  '~cut' -> the fencing token of the write hold its owner gave up with a delay,
--                  'c|'<owner> -> that of a reader's (release-after.lua): such a hold stays taken
--                  until the delay is over and is never lengthened (renew.lua); a hold with
--                  another token is a later one, unmarked
--   fence    string (common.lua)
--   queue    zset  (common.lua) both writers and readers wait here
--   expiry   hash  (common.lua) '~g|'<member> -> '<server ms> <lease ms> <attempt id>' of a
--                  waiting writer or reader that takes a grant on release (see grant_head): when
--                  its latest attempt ran, the lease it asks for, and the id its client gave that
--                  attempt
--   readers  zset  (common.lua)
-- A semaphore named N keeps the same keys under {N}:sem, its leases zset being named 'leases':
--   lock     hash  '~limit' -> the number of permits (set once; no TTL), '~used' -> permits out,
--                  <holder>  -> permits held by that holder (one holder per acquisition),
--                  'c|'<holder> -> '1' once that holder gave them up with a delay (as 'c|' above)
--   leases   zset  holder -> server time in ms when its lease ends
-- A live waiter refreshes its expiry on every attempt; a crashed one is dropped once it expires.
-- A crashed reader's hold is dropped once its own lease ends, whatever the other readers do.
-- Wake-ups name the lock key and the owner they are for:
--   'H\n<lock key>\n<owner>'            your turn: try now
--   'S\n<lock key>\n<owner>\n<ms>'      you are next: try within <ms> if nobody took the lock
--   'G\n<lock key>\n<owner>\n<token>\n<attempt id>'
--                                       granted: you hold the lock you wait for now, the write
--                                       lock (see grant_head) or the read lock (grant_readers)
--   'F\n<lock key>\n<owner>\n<token>' to the writer's client when force-unlock.lua deleted the lock
--                                       the writer <owner> held with fencing token <token>
--   'O\n<latch key>\n<client id>\n<round>' to a client with threads waiting for a count-down latch:
--                                       it reached zero in that round (latch.lua)
-- Every script that may wake a waiter takes a wake-up route argument, which says where they go:
--   '<prefix>:wake:'   plain pub/sub: PUBLISH to '<prefix>:wake:<client id>', the owning client's
--                      own channel (standalone, Sentinel, and a Cluster without sharded pub/sub)
--   '<prefix>:{N}:wake' (or '<prefix>:{N}:sem:wake') sharded pub/sub on a Cluster: SPUBLISH to the
--                      lock's own channel, in the lock's slot (a script may SPUBLISH only there); the
--                      clients whose threads wait for the lock subscribe to it meanwhile.
--   Only the second has a '{': key prefixes may not contain one.

-- An owner is '<client id>:<thread or handle id>'; client ids are hex and never contain ':'.
local function client_of(member)
  return string.match(owner_of(member), '^[^:]+')
end

-- Sends one wake-up message for member along the route (see above).
local function wake_up(route, member, message)
  if string.find(route, '{', 1, true) then
    -- pcall: a node without SPUBLISH (a cluster half-way through an upgrade) loses the wake-up,
    -- never the release; the waiter tries again by its own timer
    redis.pcall('SPUBLISH', route, message)
  else
    redis.call('PUBLISH', route .. client_of(member), message)
  end
end

-- Returns the permits of semaphore holders whose lease has ended; returns the permits out now.
local function live_permits(sem, leases, now_ms)
  for _, holder in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
    local permits = tonumber(redis.call('HGET', sem, holder) or '0')
    redis.call('HDEL', sem, holder, 'c|' .. holder)
    redis.call('HINCRBY', sem, '~used', -permits)
    redis.call('ZREM', leases, holder)
  end
  return tonumber(redis.call('HGET', sem, '~used') or '0')
end

-- Removes the members (a list) from the queue, with their deadlines and grant offers.
local function drop_entries(queue, expiry, members)
  local fields = {}
  for _, member in ipairs(members) do
    fields[#fields + 1] = member
    fields[#fields + 1] = '~g|' .. member
  end
  redis.call('ZREM', queue, unpack(members))
  redis.call('HDEL', expiry, unpack(fields))
end

-- Removes member from the queue, with its deadline and grant offer.
local function drop_entry(queue, expiry, member)
  drop_entries(queue, expiry, {member})
end

-- Drops dead entries from the head of the queue. Returns the live head (or nil) and whether any
-- entry was dropped.
local function live_head(queue, expiry, now_ms)
  local dropped = false
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then return nil, dropped end
    local deadline = tonumber(redis.call('HGET', expiry, head) or '0')
    if deadline > now_ms then return head, dropped end
    drop_entry(queue, expiry, head)
    dropped = true
  end
end

-- The grant offer of a waiting member (see grant_head) when it is fresh: its latest attempt ran no
-- longer than min(grace_ms, its lease / 3) ago. Returns when that attempt ran (server ms), the lease
-- it asks for and the attempt's id; nil without a fresh offer.
local function fresh_offer(expiry, member, now_ms, grace_ms)
  local offer = redis.call('HGET', expiry, '~g|' .. member)
  if not offer then return nil end
  local tried, lease, attempt = string.match(offer, '^(%d+) (%d+) (%d+)$')
  tried, lease = tonumber(tried), tonumber(lease)
  if not tried or now_ms - tried > math.min(grace_ms, lease / 3) then return nil end
  return tried, lease, attempt
end

-- Makes the readers that hand_off wakes on a lock no writer holds, and whose grant offers are fresh
-- (offers: {member, its attempt's server ms, lease, attempt id} each, in queue order; see
-- fresh_offer), holders of the read lock here, as grant_head does for a writer: a reader's lease
-- ends at its attempt's server time + its lease, and its 'G' message carries its own fencing token
-- and the attempt's id. 'g|'<owner> marks each grant with that id for as long as the reader holds:
-- a withdraw sent before that attempt undoes it, an earlier attempt run again after it neither
-- takes it nor clears the mark (withdraw.lua, acquire-read.lua). One command per key for them all:
-- the first token is next_token's, each next one the one before + 1, and the fence ends at the last.
local function grant_readers(lock, fence, queue, expiry, readers, offers, now_ms, now_us, route)
  local holds, leases, entries, messages = {}, {}, {}, {}
  local last, longest = 0, 0
  for i, offer in ipairs(offers) do
    local member, tried, lease, attempt = offer[1], offer[2], offer[3], offer[4]
    local owner = owner_of(member)
    local text
    if i == 1 then
      last, text = next_token(fence, now_us)
    else
      last = last + 1
      text = string.format('%d', last)
    end
    for _, value in ipairs({member, 1, 't|' .. owner, text, 'g|' .. owner, attempt}) do
      holds[#holds + 1] = value
    end
    leases[#leases + 1] = tried + lease
    leases[#leases + 1] = owner
    entries[#entries + 1] = member
    messages[#messages + 1] = 'G\n' .. lock .. '\n' .. owner .. '\n' .. text .. '\n' .. attempt
    longest = math.max(longest, tried + lease)
  end
  if #offers > 1 then redis.call('SET', fence, string.format('%d', last), 'PX', 86400000) end
  redis.call('HSET', lock, unpack(holds))
  redis.call('ZADD', readers, unpack(leases))
  -- a fresh offer is at most a third of its lease old, so longest is ahead of now_ms
  extend(lock, readers, math.max(1, longest - now_ms))
  drop_entries(queue, expiry, entries)
  for i, member in ipairs(entries) do
    wake_up(route, member, messages[i])
  end
end

-- Called when the lock has just become free, or is held by readers only (readers_only). The live
-- head gets grace_ms to take it (its entry expires then, so a dead head holds up the queue for at
-- most grace_ms) and is woken; a reader at the head brings the readers right behind it (up to
-- the first writer, at most 64). The waiter after them is told to check after grace_ms in case
-- the woken never come. With grants (from a release that frees the lock: {fence = <fence key>,
-- readers = <readers key>, now_us = <server time in us>}), each of those readers that takes
-- grants is made a holder at once instead (grant_readers); the waiter after them is told all the
-- same (a granted reader may never come either: its attempt then learns when the readers' leases
-- end).
local function hand_off(lock_key, queue, expiry, now_ms, grace_ms, route, readers_only, grants)
  local head = live_head(queue, expiry, now_ms)
  if not head or (readers_only and not is_reader(head)) then return end
  local woken = {head}
  if is_reader(head) then
    for _, member in ipairs(redis.call('ZRANGE', queue, 1, 63)) do
      if not is_reader(member) then break end
      woken[#woken + 1] = member
    end
  end
  -- read before any grant takes its reader out of the queue
  local next = redis.call('ZRANGE', queue, #woken, #woken)[1]
  local offers = {}
  for _, member in ipairs(woken) do
    local tried, lease, attempt
    if grants and is_reader(member) then tried, lease, attempt = fresh_offer(expiry, member, now_ms, grace_ms) end
    if tried then
      offers[#offers + 1] = {member, tried, lease, attempt}
    else
      redis.call('HSET', expiry, member, now_ms + grace_ms)
      wake_up(route, member, 'H\n' .. lock_key .. '\n' .. owner_of(member))
    end
  end
  if #offers > 0 then
    grant_readers(lock_key, grants.fence, queue, expiry, grants.readers, offers, now_ms, grants.now_us, route)
  end
  if next then
    wake_up(route, next, 'S\n' .. lock_key .. '\n' .. owner_of(next) .. '\n' .. grace_ms)
  end
end

-- Called by a release (a writer's, or the last reader's) when the lock has just become free and
-- nobody reads: a live head that is a writer, offered a grant (its client takes 'G' messages) and
-- tried no longer than min(grace_ms, its lease / 3) ago becomes the holder here, and its wake-up
-- message carries the grant, so it needs no attempt of its own. Its lease ends at <attempt's server time> + <lease>,
-- where its client counts it from when it sent that attempt: never later than Redis's end. The
-- '~granted' field marks a grant its owner may not have seen yet, with the attempt's id: withdraw.lua
-- undoes it (the waiter gave up first) unless it answers an attempt sent after the withdraw, an
-- attempt that crossed it takes it (acquire.lua). Returns nil when it did
-- not grant (the caller then hands off by wake-up as before); else the grant as {owner, token,
-- attempt id}. A grant to an owner of client reply_client (nil: none) is not published: the
-- caller returns it in its reply, and that client delivers it (or, without the reply, has its
-- waiters for the lock try again, which takes the grant).
local function grant_head(lock, fence, queue, expiry, now_ms, now_us, grace_ms, route, reply_client)
  local head = live_head(queue, expiry, now_ms)
  if not head or is_reader(head) then return nil end
  local tried, lease, attempt = fresh_offer(expiry, head, now_ms, grace_ms)
  if not tried then return nil end
  local token, text = next_token(fence, now_us)
  redis.call('HSET', lock, '~writer', head, head, 1, '~token', text, '~granted', attempt)
  redis.call('PEXPIRE', lock, math.max(1, tried + lease - now_ms))
  drop_entry(queue, expiry, head)
  if client_of(head) ~= reply_client then
    wake_up(route, head, 'G\n' .. lock .. '\n' .. head .. '\n' .. text .. '\n' .. attempt)
  end
  return {head, text, attempt}
end

-- Puts member in the queue (keeping its place if it is there) until it tries again after
-- retry_ms or gives up after wait_ms, plus grace_ms; with its grant offer (see grant_head), if any.
local function enqueue(queue, expiry, member, now_ms, now_us, wait_ms, retry_ms, grace_ms, offer)
  if not redis.call('ZSCORE', queue, member) then
    redis.call('ZADD', queue, now_us, member)
  end
  local ttl = math.min(wait_ms, retry_ms) + grace_ms
  if offer then
    redis.call('HSET', expiry, member, now_ms + ttl, '~g|' .. member, offer)
  else
    redis.call('HSET', expiry, member, now_ms + ttl)
  end
  keep_alive(ttl, queue, expiry)
end

-- How long until the lock may change hands by itself: the writer's lease, else the first
-- reader's lease to end, else the head waiter's deadline; at least 1 ms.
local function retry_after(lock, readers, expiry, head, writer, reading, now_ms, lease)
  local retry
  if writer then
    retry = redis.call('PTTL', lock)
    if retry < 0 then retry = lease end
  elseif reading > 0 then
    retry = tonumber(redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')[2]) - now_ms
  elseif head then
    retry = tonumber(redis.call('HGET', expiry, head) or '0') - now_ms
  else
    retry = 1
  end
  if retry < 1 then retry = 1 end
  return retry
end

-- The not-acquired end of both acquire scripts: wakes the new head if dead heads were dropped from
-- the queue of a free lock, queues member (when it will wait, with its grant offer if any) and
-- returns {0, retry_ms}.
local function not_acquired(lock, queue, expiry, readers, member, head, dropped, writer, reading,
                            now_ms, now_us, lease, wait, grace, route, offer)
  if not writer and reading == 0 and dropped then
    -- the dead heads are gone and the lock is free: the new head gets its turn now
    hand_off(lock, queue, expiry, now_ms, grace, route, false)
  end
  local retry = retry_after(lock, readers, expiry, head, writer, reading, now_ms, lease)
  if wait > 0 then
    enqueue(queue, expiry, member, now_ms, now_us, wait, retry, grace, offer)
  end
  return {0, retry}
end

