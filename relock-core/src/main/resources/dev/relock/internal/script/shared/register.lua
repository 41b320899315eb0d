-- shared/register.lua: a client's identity record, from which operators' tools name the process and thread behind an
-- owner id (see ClientRegistry). Written whole each time, so the threads that hold nothing any more leave it.
--
-- KEYS[1] the record: <prefix>:client:{<client id>}
-- ARGV[1] time to live in ms: the lease keeper writes it again before that (a crashed client's record expires)
-- ARGV[2..] field, value pairs: host, pid, application, label, then t:<owner id after the client id> and the name
--           of the thread that holds for it
-- Returns 1.
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
