/**
 * What both engines share to talk to Redis: {@link dev.relock.internal.redis.RedisCalls}, which runs relock's
 * scripts over one Lettuce connection (EVALSHA, EVAL after NOSCRIPT, sent again while a Cluster slot migrates or has
 * no known master, see {@link dev.relock.internal.redis.ScriptCalls}) and turns Lettuce's failures into relock's
 * exceptions ({@link dev.relock.internal.redis.RedisFailures}, which also tells which failures ran nothing), and
 * {@link dev.relock.internal.redis.Utf8Codec}, the codec of every connection relock opens. Depends on the API's
 * exceptions and the scripts only: never on an engine.
 */
package dev.relock.internal.redis;
