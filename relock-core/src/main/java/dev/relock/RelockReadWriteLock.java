package dev.relock;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A distributed read-write lock: many readers or one writer, never both.
 *
 * <p>Both halves are full {@link RelockLock}s: reentrant per owning thread, leased (each reader
 * has its own lease, so a crashed reader's hold ends on its own), renewed by the lease keeper
 * unless given an explicit lease, fenced, and woken by message. Waiters queue first come, first
 * served; once a writer waits, new readers queue behind it, so a stream of readers cannot starve
 * writers — but a thread that holds the read lock may always re-enter it.
 *
 * <ul>
 *   <li>Downgrade: the write holder may take the read lock, then release the write lock.
 *   <li>Upgrade is refused: a read holder asking for the write lock gets an
 *       {@link IllegalMonitorStateException} at once, from every acquiring method ({@code tryLock}
 *       included), because two readers upgrading would wait for each other forever.
 * </ul>
 *
 * <p>The write half is the same lock as {@link RelockClient#lock(String)} of the same name: an
 * exclusive lock excludes readers of that name, and readers exclude it.
 *
 * <p>Fencing: every fresh acquisition, read or write, draws a token from the same counter, so a
 * writer's token is greater than every earlier writer's and reader's on that name.
 *
 * <p>Redis being unavailable: as for every {@link RelockLock}, a wait of either half tries again until
 * its deadline ({@link RelockLock#tryLock(long, java.util.concurrent.TimeUnit)}) and throws
 * {@link RedisUnavailableException} only if its last try still found Redis unavailable; a single try
 * fails at once.
 */
public interface RelockReadWriteLock extends ReadWriteLock {

    /** The lock's name as given to {@link RelockClient#readWriteLock(String)}. */
    String name();

    /** The shared half. */
    @Override
    RelockLock readLock();

    /** The exclusive half: the same lock as {@link RelockClient#lock(String)}. */
    @Override
    RelockLock writeLock();
}
