package dev.relock.reactor;

import dev.relock.LockHandle;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link RelockLock} for Project Reactor: the exclusive lock of {@code RelockClient.lock(name)}, or one half of a
 * read-write lock ({@link ReactiveRelockReadWriteLock}).
 *
 * <pre>{@code
 * ReactiveRelockLock invoice = ReactiveRelockLock.of(client.lock("invoice:" + id));
 * Mono<Invoice> paid = invoice.withLock(invoices.load(id).map(Invoice::paid).flatMap(invoices::save));
 * }</pre>
 *
 * <p>Every method returns a lazy publisher: nothing reaches Redis until it is subscribed, and every subscription
 * acquires (or asks) anew. Holds belong to their {@link LockHandle}, not to a thread, and are not reentrant: a
 * subscription that asks for a lock its own chain already holds waits like any other owner. Cancelling while
 * waiting leaves the lock's queue; {@code withLock} releases on complete, error and cancel; a lease lost while its
 * body runs cancels the body and fails the publisher with {@link dev.relock.LeaseLostException}. {@link ReactiveLocks}
 * states these rules in full, and holds a lock for a body made from the handle
 * ({@link ReactiveLocks#holding}, {@link ReactiveLocks#holdingMany}, with this object's {@link #acquire()} or
 * {@link #tryAcquire(Duration)} as the acquisition).
 *
 * <p>Threads: a handle is signalled by the thread that completes the acquisition (a Lettuce event executor, or the
 * subscribing one when the outcome is known at once), which also subscribes a {@code withLock} body; releases and
 * {@link #isLocked()} run on {@link Schedulers#boundedElastic()}. Nothing here blocks the subscribing thread.
 *
 * <p>Immutable; a view of the lock it was made of, which stays usable as before.
 */
public final class ReactiveRelockLock {

    private final RelockLock lock;

    private ReactiveRelockLock(RelockLock lock) {
        this.lock = lock;
    }

    /**
     * The reactive view of {@code lock}, of whichever client made it.
     *
     * @throws NullPointerException if lock is null
     */
    public static ReactiveRelockLock of(RelockLock lock) {
        return new ReactiveRelockLock(Objects.requireNonNull(lock, "lock"));
    }

    /** The lock's name. */
    public String name() {
        return lock.name();
    }

    /**
     * Acquires the lock for a new handle when subscribed, waiting as long as it takes, with a lease renewed while
     * held; Redis trouble is retried with back-off.
     *
     * @return a Mono of the handle, which the subscriber then owns and releases ({@link ReactiveLocks#release});
     *     errors with {@link IllegalStateException} if the client is or gets closed
     */
    public Mono<LockHandle> acquire() {
        return ReactiveLocks.acquire(lock);
    }

    /**
     * Acquires the lock for a new handle when subscribed, with a renewed lease, waiting up to {@code wait}; a wait
     * of zero or less tries once.
     *
     * @return a Mono of the handle, or empty when the wait ended first; errors with {@link dev.relock.RelockException}
     *     when Redis fails
     * @throws NullPointerException if wait is null
     */
    public Mono<LockHandle> tryAcquire(Duration wait) {
        return ReactiveLocks.tryAcquire(lock, wait);
    }

    /**
     * As {@link #tryAcquire(Duration)}, with an explicit lease that is not renewed; a lease that is not positive is
     * an {@link IllegalArgumentException} signalled when subscribed.
     *
     * @throws NullPointerException if wait or lease is null
     */
    public Mono<LockHandle> tryAcquire(Duration wait, Duration lease) {
        return ReactiveLocks.tryAcquire(lock, wait, lease);
    }

    /**
     * Acquires the lock when subscribed (as {@link #acquire()}), then subscribes {@code body} and holds the lock
     * until the body completes, fails or is cancelled; the body's value is signalled after the release.
     *
     * @throws NullPointerException if body is null
     */
    public <T> Mono<T> withLock(Mono<T> body) {
        return ReactiveLocks.withLock(lock, body);
    }

    /**
     * As {@link #withLock(Mono)}, for a Flux: its elements are signalled while the lock is held, its completion after
     * the release.
     *
     * @throws NullPointerException if body is null
     */
    public <T> Flux<T> withLock(Flux<T> body) {
        return ReactiveLocks.withLock(lock, body);
    }

    /**
     * Whether any owner, of any client, holds the lock when subscribed (for a half of a read-write lock: any reader
     * or the writer). One round trip, on {@link Schedulers#boundedElastic()}.
     */
    public Mono<Boolean> isLocked() {
        return ReactiveLocks.roundTrip(lock::isLocked);
    }

    @Override
    public String toString() {
        return "ReactiveRelockLock[" + lock.name() + "]";
    }
}
