package dev.relock;

/**
 * A hold whose lease ended while it was held.
 *
 * @param lockName the lock's name
 * @param fencingToken the token of the lost hold; the resource it guarded should refuse it now
 * @param reason what was seen, for logs
 */
public record LeaseLost(String lockName, long fencingToken, String reason) {}
