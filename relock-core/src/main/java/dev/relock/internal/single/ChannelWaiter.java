package dev.relock.internal.single;

/**
 * Something of this client that waits for a wake-up on a shard channel ({@link ShardWakeChannels}): a queued
 * {@link Acquisition}, a wait for a count-down latch ({@link LatchAwait}) or a condition's await ({@link ConditionAwait}).
 */
interface ChannelWaiter {

    /**
     * What it waits for may have happened: look again. Called on Lettuce I/O threads, also whenever the channel's
     * subscription is (re)confirmed, when a message published meanwhile may have reached nobody; never blocks.
     */
    void wake();
}
