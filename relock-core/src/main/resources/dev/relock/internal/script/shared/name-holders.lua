-- shared/name-holders.lua: adds to a client's identity record (see register.lua) the threads of owner ids that began to hold
-- since its last whole write, so that operators' tools name a holder's thread from shortly after its acquisition on,
-- not from the lease keeper's next pass (see RecordWrites). Only to a record that exists: a whole write gave it its
-- host, pid and time to live, which this keeps; a record that expired, or was deleted at close, stays gone.
--
-- KEYS[1] the record: <prefix>:client:{<client id>}
-- ARGV[1..] field, value pairs: t:<owner id after the client id>, the name of the thread that holds for it
-- Returns 1 if the record was written to, 0 if there was none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
