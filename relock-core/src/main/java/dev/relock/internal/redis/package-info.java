/**
 * What both engines share to talk to Redis: {@link dev.relock.internal.redis.RedisCalls}, which runs relock's
 * scripts over one Lettuce connection (EVALSHA, EVAL after NOSCRIPT, sent again while a Cluster slot migrates or has
 * no known master) and turns Lettuce's failures into relock's exceptions, and
 * {@link dev.relock.internal.redis.Utf8Codec}, the codec of every connection relock opens. Depends on the API's
 * exceptions and the scripts only: never on an engine.
 */
package dev.relock.internal.redis;
